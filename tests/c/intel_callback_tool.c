/* A tool written for Intel PTI 1.2's Callback API (Intel's pti_callback.h), to run unchanged on
 * Intel's library and on libpti's libpti_view.so.1. Preloaded into a program, its constructor subscribes, enables the driver-API
 * domain (ENTER and EXIT), the internal-event domain, the GPU-operation and kernel domains,
 * notes each answer, and enables the driver-API and device views so that callbacks and records
 * can be matched. At exit it writes to $PTI_TEST_OUT.<pid>:
 *   T ENABLE <domain> <result name>     the answer of ptiCallbackEnableDomain per domain
 *   T CB <group> <api id> <corr>        one line per driver-API EXIT callback
 *   T REC <group> <api id> <corr>       one line per driver-API view record
 *   T OP <domain> <phase> <group> <api id> <corr> <op kind> <op id> <kernel handle> <name>
 *                                       one line per operation of a GPU-operation callback
 *   T KERNEL <domain> <phase> <group> <api id> <return code> <kernel handle> <name or ->
 *                                       one line per kernel-object callback
 *   T DEV <kind> <op id> <corr> <name>  one line per kernel, copy and fill record
 *   T STATS <enters> <exits> <bad instance data> <bad user data> <bad phase> <internal events>
 *   T NAMES <domain 1023 name> <phase 2 name>
 * With $PTI_TEST_COMPLETED_FLAGS="<enter>,<exit>", the GPU_OPERATION_COMPLETED domain is enabled
 * with those flags (else 1, 1).
 * It is built against libpti's Intel-compatible headers, calls the plain C names and links
 * against libpti_view.so.1, Intel's library name. */

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pti/pti_view.h"

/* Intel PTI 1.2's Callback API, from the Intel-compatible pti_callback.h (include/pti-intel
 * comes first on the include path, as `pkg-config pti_view` puts it). */
#include "pti/pti_callback.h"

typedef pti_callback_domain intel_domain;
typedef pti_callback_phase intel_phase;
typedef pti_gpu_op_details gpu_op_details;
typedef pti_callback_gpu_op_data gpu_op_data;
typedef pti_callback_kernel_data kernel_data;
#define DOMAIN_GPU_OPERATION_APPENDED PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED
#define DOMAIN_GPU_OPERATION_COMPLETED PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED
#define DOMAIN_KERNEL_CREATED PTI_CB_DOMAIN_DRIVER_KERNEL_CREATED
#define DOMAIN_KERNEL_DESTROYED PTI_CB_DOMAIN_DRIVER_KERNEL_DESTROYED
#define DOMAIN_DRIVER_API PTI_CB_DOMAIN_DRIVER_API
#define DOMAIN_INTERNAL_EVENT PTI_CB_DOMAIN_INTERNAL_EVENT
#define PHASE_API_ENTER PTI_CB_PHASE_API_ENTER
#define PHASE_API_EXIT PTI_CB_PHASE_API_EXIT
#define PHASE_INTERNAL_EVENT PTI_CB_PHASE_INTERNAL_EVENT

/* What libpti documents for the driver-API domain's cb_data; its first fields are those every
 * Intel callback struct starts with (domain, phase, return code, correlation ID). */
typedef struct {
  intel_domain _domain;
  intel_phase _phase;
  uint32_t _return_code;
  uint32_t _correlation_id;
} common_cb_data;

#define MAX_LINES (1 << 14)
#define LINE_SIZE 256
static char lines[MAX_LINES][LINE_SIZE];
static atomic_int nlines;

/* Keeps one output line (written at exit: the callbacks may run before the program's output). */
static void keep(const char* format, ...) __attribute__((format(printf, 1, 2)));
static void keep(const char* format, ...) {
  int i = atomic_fetch_add(&nlines, 1);
  if (i >= MAX_LINES) return;
  va_list args;
  va_start(args, format);
  vsnprintf(lines[i], LINE_SIZE, format, args);
  va_end(args);
}

static void on_device_domain(intel_domain domain, pti_api_group_id group, uint32_t api_id, const void* cb_data) {
  if (domain == DOMAIN_GPU_OPERATION_APPENDED || domain == DOMAIN_GPU_OPERATION_COMPLETED) {
    const gpu_op_data* d = cb_data;
    for (uint32_t i = 0; i < d->_operation_count; ++i) {
      const gpu_op_details* op = &d->_operation_details[i];
      keep("T OP %u %u %u %u %u %u %llu %llu %s", domain, d->_phase, (unsigned)group, api_id, d->_correlation_id,
           op->_operation_kind, (unsigned long long)op->_operation_id, (unsigned long long)op->_kernel_handle,
           op->_name ? op->_name : "-");
    }
  } else {
    const kernel_data* k = cb_data;
    keep("T KERNEL %u %u %u %u %u %llu %s", domain, k->_phase, (unsigned)group, api_id, k->_return_code,
         (unsigned long long)k->_kernel_handle, k->_name ? k->_name : "-");
  }
}

#define MAX_CALLS (1 << 16)
static struct { uint32_t group, id, corr; } calls[MAX_CALLS];
static atomic_int ncalls, enters, exits, bad_instance, bad_user, bad_phase, internal_events;
static int user_magic;
static FILE* out;
static pti_callback_subscriber_handle subscriber;
static const uint32_t asked[] = {DOMAIN_DRIVER_API, DOMAIN_INTERNAL_EVENT, DOMAIN_GPU_OPERATION_APPENDED,
                                 DOMAIN_GPU_OPERATION_COMPLETED, DOMAIN_KERNEL_CREATED, DOMAIN_KERNEL_DESTROYED};
static pti_result answers[sizeof asked / sizeof asked[0]];

static void on_callback(intel_domain domain, pti_api_group_id group, uint32_t api_id, void* backend_ctx,
                        void* cb_data, void* global_user_data, void** instance_user_data) {
  (void)backend_ctx;
  if (global_user_data != &user_magic) atomic_fetch_add(&bad_user, 1);
  const common_cb_data* data = cb_data;
  if (domain == DOMAIN_INTERNAL_EVENT) {
    atomic_fetch_add(&internal_events, 1);
    if (data->_phase != PHASE_INTERNAL_EVENT) atomic_fetch_add(&bad_phase, 1);
    return;
  }
  if (domain == DOMAIN_GPU_OPERATION_APPENDED || domain == DOMAIN_GPU_OPERATION_COMPLETED ||
      domain == DOMAIN_KERNEL_CREATED || domain == DOMAIN_KERNEL_DESTROYED) {
    on_device_domain(domain, group, api_id, cb_data);
    return;
  }
  if (domain != DOMAIN_DRIVER_API) return;
  if (data->_phase == PHASE_API_ENTER) {
    atomic_fetch_add(&enters, 1);
    if (*instance_user_data != NULL) atomic_fetch_add(&bad_instance, 1);
    *instance_user_data = (void*)(uintptr_t)(data->_correlation_id + 1u);
  } else if (data->_phase == PHASE_API_EXIT) {
    atomic_fetch_add(&exits, 1);
    if (*instance_user_data != (void*)(uintptr_t)(data->_correlation_id + 1u)) atomic_fetch_add(&bad_instance, 1);
    int i = atomic_fetch_add(&ncalls, 1);
    if (i < MAX_CALLS) {
      calls[i].group = group;
      calls[i].id = api_id;
      calls[i].corr = data->_correlation_id;
    }
  } else {
    atomic_fetch_add(&bad_phase, 1);
  }
}

static void requested(unsigned char** buffer, size_t* size) {
  *size = 1 << 20;
  *buffer = malloc(*size);
}

static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (out && ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) {
    if (r->_view_kind == PTI_VIEW_DRIVER_API) {
      const pti_view_record_api* a = (const void*)r;
      fprintf(out, "T REC %u %u %u\n", (unsigned)a->_api_group, a->_api_id, a->_correlation_id);
    } else if (r->_view_kind == PTI_VIEW_DEVICE_GPU_KERNEL) {
      const pti_view_record_kernel* k = (const void*)r;
      fprintf(out, "T DEV KERNEL %llu %u %s\n", (unsigned long long)k->_kernel_id, k->_correlation_id, k->_name);
    } else if (r->_view_kind == PTI_VIEW_DEVICE_GPU_MEM_COPY) {
      const pti_view_record_memory_copy* c = (const void*)r;
      fprintf(out, "T DEV COPY %llu %u %s\n", (unsigned long long)c->_mem_op_id, c->_correlation_id, c->_name);
    } else if (r->_view_kind == PTI_VIEW_DEVICE_GPU_MEM_FILL) {
      const pti_view_record_memory_fill* f = (const void*)r;
      fprintf(out, "T DEV FILL %llu %u %s\n", (unsigned long long)f->_mem_op_id, f->_correlation_id, f->_name);
    }
  }
  free(buffer);
}

static void finish(void) {
  /* Completions found by this flush are reported while the domains are on; then callbacks stop
   * before the last records are written, so both cover the same calls. */
  ptiFlushAllViews();
  ptiCallbackDisableAllDomains(subscriber);
  ptiCallbackUnsubscribe(subscriber);
  ptiFlushAllViews();
  for (size_t i = 0; i < sizeof asked / sizeof asked[0]; ++i)
    fprintf(out, "T ENABLE %u %s\n", asked[i], ptiResultTypeToString(answers[i]));
  int kept = atomic_load(&nlines);
  for (int i = 0; i < kept && i < MAX_LINES; ++i) fprintf(out, "%s\n", lines[i]);
  int n = atomic_load(&ncalls);
  for (int i = 0; i < n && i < MAX_CALLS; ++i) fprintf(out, "T CB %u %u %u\n", calls[i].group, calls[i].id, calls[i].corr);
  fprintf(out, "T STATS %d %d %d %d %d %d\n", atomic_load(&enters), atomic_load(&exits), atomic_load(&bad_instance),
          atomic_load(&bad_user), atomic_load(&bad_phase), atomic_load(&internal_events));
  fprintf(out, "T NAMES %s %s\n", ptiCallbackDomainTypeToString(DOMAIN_DRIVER_API),
          ptiCallbackPhaseTypeToString(PHASE_API_EXIT));
  fclose(out);
  out = NULL;
  /* $PTI_TEST_QUICK_EXIT (set for Intel PTI's runs): end here, before the libraries'
   * destructors, in which Intel PTI 1.2 deadlocks when it still tracks commands (see
   * tests/c/view_tool.c). */
  if (getenv("PTI_TEST_QUICK_EXIT")) {
    fflush(stdout);
    fflush(stderr);
    _exit(0);
  }
}

__attribute__((constructor)) static void start(void) {
  const char* base = getenv("PTI_TEST_OUT");
  char path[4096];
  snprintf(path, sizeof path, "%s.%ld", base ? base : "/tmp/intel_callback_tool", (long)getpid());
  out = fopen(path, "w");
  if (!out) abort();
  if (ptiViewSetCallbacks(requested, completed) != PTI_SUCCESS) abort();
  /* Intel's library delivers callbacks only while a device view is enabled. */
  if (ptiViewEnable(PTI_VIEW_DRIVER_API) != PTI_SUCCESS) abort();
  if (ptiViewEnable(PTI_VIEW_DEVICE_GPU_KERNEL) != PTI_SUCCESS) abort();
  if (ptiViewEnable(PTI_VIEW_DEVICE_GPU_MEM_COPY) != PTI_SUCCESS) abort();
  if (ptiViewEnable(PTI_VIEW_DEVICE_GPU_MEM_FILL) != PTI_SUCCESS) abort();
  if (ptiCallbackSubscribe(&subscriber, on_callback, &user_magic) != PTI_SUCCESS) abort();
  /* $PTI_TEST_COMPLETED_FLAGS="<enter>,<exit>": the GPU_OPERATION_COMPLETED domain enabled with
   * those flags instead of (1, 1). */
  unsigned completed_enter = 1, completed_exit = 1;
  const char* flags = getenv("PTI_TEST_COMPLETED_FLAGS");
  if (flags && sscanf(flags, "%u,%u", &completed_enter, &completed_exit) != 2) abort();
  for (size_t i = 0; i < sizeof asked / sizeof asked[0]; ++i) {
    int completed = asked[i] == DOMAIN_GPU_OPERATION_COMPLETED;
    answers[i] = ptiCallbackEnableDomain(subscriber, asked[i], completed ? completed_enter : 1,
                                         completed ? completed_exit : 1);
  }
  atexit(finish);
}
