/* A tool on libpti's public API, preloaded into a SYCL program (LD_PRELOAD, after libpti) as a
 * collector library: its constructor enables the runtime-API and driver-API views, the device
 * views, external correlation and libpti's memory-allocation extension, and subscribes to
 * runtime-API callbacks; at exit it flushes and writes what it received ("T ..." lines) to the
 * file $PTI_TEST_OUT.<pid> (processes the program starts inherit the preload), for the test to
 * check against the program's "W" lines. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pti/pti_callback.h"
#include "pti/pti_ext.h"
#include "pti/pti_runtime_sycl_api_ids.h"
#include "pti/pti_view.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE* out;
static int problems;
static unsigned long enters, exits, exits_failed;

static void problem(const char* what, uint32_t id) {
  fprintf(stderr, "sycl_tool: %s (api %u)\n", what, id);
  __atomic_fetch_add(&problems, 1, __ATOMIC_RELAXED);
}

static void on_callback(void* user_data, pti_callback_domain domain, pti_api_group_id group, uint32_t api_id,
                        void* cb_data) {
  (void)user_data;
  if (domain == PTI_DOMAIN_PTI_CRITICAL_EVENT) {
    pti_critical_event_callback_data* c = cb_data;
    pthread_mutex_lock(&lock);
    if (out) fprintf(out, "T CRITICAL %d %s\n", (int)c->_pti_event, c->_message);
    pthread_mutex_unlock(&lock);
    return;
  }
  pti_apicall_callback_data* d = cb_data;
  if (domain != PTI_DOMAIN_RUNTIME_API || group != PTI_API_GROUP_SYCL) problem("callback of another domain", api_id);
  if (!d->_args) problem("no _args (the UR parameter struct)", api_id);
  if (d->_site == PTI_SITE_ENTER) {
    __atomic_fetch_add(&enters, 1, __ATOMIC_RELAXED);
    *d->_local_data = d->_correlation_id;
    if (d->_return_code) problem("_return_code at ENTER", api_id);
    if ((api_id == urEnqueueKernelLaunchWithArgsExp_id || api_id == urEnqueueKernelLaunch_id) && !d->_kernel_name)
      problem("no _kernel_name for a kernel launch", api_id);
  } else {
    __atomic_fetch_add(&exits, 1, __ATOMIC_RELAXED);
    if (*d->_local_data != d->_correlation_id) problem("_local_data not kept from ENTER to EXIT", api_id);
    if (!d->_return_code) problem("no _return_code at EXIT", api_id);
    else if (*(const int32_t*)d->_return_code != 0) __atomic_fetch_add(&exits_failed, 1, __ATOMIC_RELAXED);
  }
}

static void requested(unsigned char** buffer, size_t* size) {
  *size = 1 << 20;
  *buffer = malloc(*size);
}

static const char* or_dash(const char* s) { return s && *s ? s : "-"; }

static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  pthread_mutex_lock(&lock);
  while (out && ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) {
    switch ((uint32_t)r->_view_kind) {
      case PTI_VIEW_DRIVER_API:
      case PTI_VIEW_RUNTIME_API: {
        pti_view_record_api* a = (void*)r;
        fprintf(out, "T %s %u %u %u %u %llu %llu %d\n", r->_view_kind == PTI_VIEW_RUNTIME_API ? "RUNTIME" : "DRIVER",
                (unsigned)a->_api_group, a->_api_id, a->_correlation_id, a->_thread_id,
                (unsigned long long)a->_start_timestamp, (unsigned long long)a->_end_timestamp, (int)a->_return_code);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_KERNEL:
      case PTI_VIEW_DEVICE_CPU_KERNEL: {
        pti_view_record_kernel_v2* k = (void*)r;
        fprintf(out, "T KERNEL %s %u %u %llu %llu %llu %llu %llu %llu %llu %llu %u %s %llu\n", k->_name, k->_correlation_id,
                k->_thread_id, (unsigned long long)k->_append_timestamp, (unsigned long long)k->_submit_timestamp,
                (unsigned long long)k->_start_timestamp, (unsigned long long)k->_end_timestamp,
                (unsigned long long)k->_sycl_task_begin_timestamp, (unsigned long long)k->_sycl_enqk_begin_timestamp,
                (unsigned long long)k->_sycl_node_id, (unsigned long long)k->_sycl_queue_id, k->_sycl_invocation_id,
                or_dash(k->_source_file_name), (unsigned long long)k->_source_line_number);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_COPY: {
        pti_view_record_memory_copy_v2* c = (void*)r;
        fprintf(out, "T COPY %s %llu %u %llu %llu %llu\n", ptiViewMemcpyTypeToString(c->_memcpy_type),
                (unsigned long long)c->_bytes, c->_correlation_id, (unsigned long long)c->_start_timestamp,
                (unsigned long long)c->_end_timestamp, (unsigned long long)c->_sycl_queue_id);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_FILL: {
        pti_view_record_memory_fill_v2* f = (void*)r;
        fprintf(out, "T FILL %llu %u %llu %llu %llu\n", (unsigned long long)f->_bytes, f->_correlation_id,
                (unsigned long long)f->_start_timestamp, (unsigned long long)f->_end_timestamp,
                (unsigned long long)f->_sycl_queue_id);
        break;
      }
      case PTI_VIEW_EXTERNAL_CORRELATION: {
        pti_view_record_external_correlation* e = (void*)r;
        fprintf(out, "T EXTERNAL %u %llu %d\n", e->_correlation_id, (unsigned long long)e->_external_id,
                (int)e->_external_kind);
        break;
      }
      case PTI_VIEW_EXT_MEMORY_ALLOCATION: {
        pti_view_record_memory_allocation* m = (void*)r;
        fprintf(out, "T MEMORY %s %s %llu %llu %u %llu %llu %s %s\n",
                m->_operation == PTI_VIEW_MEMORY_OPERATION_ALLOCATION ? "ALLOC" : "RELEASE",
                ptiViewMemoryTypeToString(m->_mem_type), (unsigned long long)m->_bytes, (unsigned long long)m->_address,
                m->_correlation_id, (unsigned long long)m->_start_timestamp, (unsigned long long)m->_end_timestamp,
                or_dash(m->_name), or_dash(m->_device_name));
        break;
      }
      default:
        fprintf(out, "T OTHER %u\n", (unsigned)r->_view_kind);
    }
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

#define OKAY(call)                                                                    \
  do {                                                                                \
    pti_result r_ = (call);                                                           \
    if (r_ != PTI_SUCCESS) {                                                          \
      fprintf(stderr, "sycl_tool: %s: %s\n", #call, ptiResultTypeToString(r_));       \
      problems++;                                                                     \
    }                                                                                 \
  } while (0)

static const pti_view_kind views[] = {
    PTI_VIEW_RUNTIME_API,         PTI_VIEW_DRIVER_API,          PTI_VIEW_DEVICE_GPU_KERNEL,
    PTI_VIEW_DEVICE_CPU_KERNEL,   PTI_VIEW_DEVICE_GPU_MEM_COPY, PTI_VIEW_DEVICE_GPU_MEM_FILL,
    PTI_VIEW_EXTERNAL_CORRELATION, PTI_VIEW_EXT_MEMORY_ALLOCATION};
#define N_VIEWS (sizeof views / sizeof views[0])
static pti_callback_subscriber sub;

static void finish(void) {
  OKAY(ptiFlushAllViews());
  OKAY(ptiCallbackUnsubscribe(sub));
  uint64_t pending = 99, dropped = 0, criticals = 0;
  OKAY(ptiViewGetPendingDeviceRecordCount(&pending));
  for (size_t i = 0; i < N_VIEWS; ++i) {
    uint64_t n = 0;
    OKAY(ptiViewGetDroppedRecordCount(views[i], &n));
    dropped += n;
  }
  for (int code = 0; code < 400; ++code) {
    uint64_t n = 0;
    if (ptiCallbackGetCriticalEventCount((pti_result)code, &n) == PTI_SUCCESS) criticals += n;
  }
  uint32_t intercepted = 0;
  OKAY(ptiGetInterceptedFunctionCount(PTI_API_GROUP_SYCL, &intercepted));
  pthread_mutex_lock(&lock);
  if (out) {
    fprintf(out, "T CALLBACKS %lu %lu %lu\n", enters, exits, exits_failed);
    fprintf(out, "T PENDING %llu\nT DROPPED %llu\nT CRITICALS %llu\nT INTERCEPTED %u\nT PROBLEMS %d\n",
            (unsigned long long)pending, (unsigned long long)dropped, (unsigned long long)criticals, intercepted,
            problems);
    fclose(out);
    out = NULL;
  }
  pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void start(void) {
  const char* base = getenv("PTI_TEST_OUT");
  char path[4096];
  snprintf(path, sizeof path, "%s.%ld", base ? base : "/tmp/sycl_tool", (long)getpid());
  out = fopen(path, "w");
  if (!out) abort();
  OKAY(ptiCallbackSubscribe(&sub, on_callback, NULL));
  OKAY(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_PTI_CRITICAL_EVENT));
  OKAY(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_RUNTIME_API));
  OKAY(ptiViewSetCallbacks(requested, completed));
  for (size_t i = 0; i < N_VIEWS; ++i) OKAY(ptiViewEnable(views[i]));
  atexit(finish);
}
