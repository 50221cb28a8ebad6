/* The Level Zero workload under a tool built on libpti's public API: callbacks for every Level
 * Zero function but one, the driver-API view for a few classes and functions, and every device
 * view. Linking libpti makes its constructor set ZE_ENABLE_TRACING_LAYER=1 before the loader
 * initialises. After the workload it flushes and prints what it received ("T ..." lines) for the
 * test to check against the workload's lines and the simulated driver's ground truth. */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pti/pti_callback.h"
#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"

#include "print_launch.h"
#include "ze_workload.h"

#define BYTES (4096 * sizeof(float))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int problems;

#define MAX_CB 100000
static struct cb {
  char site;
  uint32_t id, corr, tid;
  int64_t rc;
  char kernel[32];
} cbs[MAX_CB];
static int n_cb, cb_overflow;

/* The signal event an append had at ENTER, to check that the program's argument is back at EXIT. */
static __thread ze_event_handle_t signal_at_enter;

static void problem(const char* what, uint32_t id, uint32_t corr) {
  fprintf(stderr, "ze_traced: %s (api %u, correlation %u)\n", what, id, corr);
  problems++;
}

/* The signal-event parameter of the appends the tool inspects (NULL for other functions). */
static ze_event_handle_t* signal_param(uint32_t api_id, const void* args) {
  switch (api_id) {
    case zeCommandListAppendLaunchKernel_id:
      return ((const ze_command_list_append_launch_kernel_params_t*)args)->phSignalEvent;
    case zeCommandListAppendMemoryCopy_id:
      return ((const ze_command_list_append_memory_copy_params_t*)args)->phSignalEvent;
    case zeCommandListAppendMemoryFill_id:
      return ((const ze_command_list_append_memory_fill_params_t*)args)->phSignalEvent;
    case zeCommandListAppendBarrier_id:
      return ((const ze_command_list_append_barrier_params_t*)args)->phSignalEvent;
    default:
      return NULL;
  }
}

/* The parameter structs are the tracing layer's, pointing at the real arguments. */
static void check_args(const pti_apicall_callback_data* d, uint32_t api_id, uint32_t corr) {
  if (!d->_args) {
    problem("no _args", api_id, corr);
    return;
  }
  if (api_id == zeCommandListAppendMemoryCopy_id) {
    const ze_command_list_append_memory_copy_params_t* p = d->_args;
    if (*p->psize != BYTES || !*p->pdstptr || !*p->psrcptr) problem("zeCommandListAppendMemoryCopy _args", api_id, corr);
  }
  if (api_id == zeCommandListAppendMemoryFill_id) {
    const ze_command_list_append_memory_fill_params_t* p = d->_args;
    if (*p->psize != BYTES || *p->ppattern_size != sizeof(float)) problem("zeCommandListAppendMemoryFill _args", api_id, corr);
  }
  if (api_id == zeCommandListAppendLaunchKernel_id) {
    const ze_command_list_append_launch_kernel_params_t* p = d->_args;
    const char* k = d->_kernel_name;
    if (!*p->phKernel || !*p->ppLaunchFuncArgs || !k || (strcmp(k, "vadd") != 0 && strcmp(k, "spin") != 0))
      problem("zeCommandListAppendLaunchKernel _args or _kernel_name", api_id, corr);
  }
  if (api_id == zeKernelCreate_id && d->_site == PTI_SITE_EXIT) {
    const ze_kernel_create_params_t* p = d->_args;
    if (!*p->pphKernel || !**p->pphKernel) problem("zeKernelCreate _args at EXIT", api_id, corr);
  }
  ze_event_handle_t* signal = signal_param(api_id, d->_args);
  if (signal) {
    if (d->_site == PTI_SITE_ENTER) signal_at_enter = *signal;
    else if (*signal != signal_at_enter) problem("the program's signal event is not back at EXIT", api_id, corr);
  }
  switch (api_id) {
    case zeCommandListAppendMemoryCopy_id:
    case zeCommandListAppendLaunchKernel_id:
    case zeCommandQueueExecuteCommandLists_id:
    case zeMemAllocDevice_id:
    case zeEventPoolCreate_id:
      if (!d->_backend_context_handle) problem("no context handle", api_id, corr);
  }
}

static void on_callback(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                        uint32_t api_id, void* cb_data) {
  (void)user_data;
  if (domain == PTI_DOMAIN_PTI_CRITICAL_EVENT) {
    pti_critical_event_callback_data* c = cb_data;
    pthread_mutex_lock(&lock);
    printf("T CRITICAL %d %s\n", (int)c->_pti_event, c->_message);
    pthread_mutex_unlock(&lock);
    return;
  }
  pti_apicall_callback_data* d = cb_data;
  if (group != PTI_API_GROUP_LEVELZERO) problem("callback for a group other than Level Zero", api_id, 0);
  struct cb e = {0};
  e.site = d->_site == PTI_SITE_ENTER ? 'E' : 'X';
  e.id = api_id;
  e.corr = d->_correlation_id;
  e.tid = (uint32_t)syscall(SYS_gettid);
  e.rc = d->_return_code ? (int64_t) * (const ze_result_t*)d->_return_code : -1;
  if (d->_kernel_name) snprintf(e.kernel, sizeof e.kernel, "%s", d->_kernel_name);
  if (d->_site == PTI_SITE_ENTER) {
    *d->_local_data = d->_correlation_id;
    if (d->_return_code) problem("_return_code set at ENTER", api_id, e.corr);
  } else {
    if (*d->_local_data != d->_correlation_id) problem("_local_data not kept from ENTER to EXIT", api_id, e.corr);
    if (!d->_return_code) problem("no _return_code at EXIT", api_id, e.corr);
  }
  check_args(d, api_id, e.corr);
  pthread_mutex_lock(&lock);
  if (n_cb < MAX_CB) cbs[n_cb++] = e;
  else cb_overflow = 1;
  pthread_mutex_unlock(&lock);
}

static void requested(unsigned char** buffer, size_t* size) {
  *size = 1 << 20;
  *buffer = malloc(*size);
}

static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  pthread_mutex_lock(&lock);
  while (ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) {
    switch (r->_view_kind) {
      case PTI_VIEW_DRIVER_API: {
        pti_view_record_api* a = (void*)r;
        printf("T API %u %u %u %llu %llu %d\n", a->_api_id, a->_correlation_id, a->_thread_id,
               (unsigned long long)a->_start_timestamp, (unsigned long long)a->_end_timestamp,
               (int)a->_return_code);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_KERNEL:
      case PTI_VIEW_DEVICE_CPU_KERNEL: {
        pti_view_record_kernel_v2* k = (void*)r;
        printf("T KERNEL %s %u %u %llu %llu %llu %llu %p %s %s %u.%u %llu\n", k->_name, k->_correlation_id,
               k->_thread_id, (unsigned long long)k->_append_timestamp,
               (unsigned long long)k->_submit_timestamp, (unsigned long long)k->_start_timestamp,
               (unsigned long long)k->_end_timestamp, k->_queue_handle,
               r->_view_kind == PTI_VIEW_DEVICE_CPU_KERNEL ? "cpu" : "gpu",
               k->_pci_address[0] ? k->_pci_address : "-", k->_engine_ordinal, k->_engine_index,
               (unsigned long long)k->_kernel_id);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_COPY: {
        pti_view_record_memory_copy_v2* c = (void*)r;
        printf("T COPY %s %s %llu %u %u %llu %llu %llu %llu %s %u.%u %llu\n", c->_name,
               ptiViewMemcpyTypeToString(c->_memcpy_type), (unsigned long long)c->_bytes,
               c->_correlation_id, c->_thread_id, (unsigned long long)c->_append_timestamp,
               (unsigned long long)c->_submit_timestamp, (unsigned long long)c->_start_timestamp,
               (unsigned long long)c->_end_timestamp, c->_pci_address[0] ? c->_pci_address : "-",
               c->_engine_ordinal, c->_engine_index, (unsigned long long)c->_mem_op_id);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_FILL: {
        pti_view_record_memory_fill_v2* f = (void*)r;
        printf("T FILL %s %llu %u %u %llu %llu %llu %llu %s %u.%u %llu\n", f->_name,
               (unsigned long long)f->_bytes, f->_correlation_id, f->_thread_id,
               (unsigned long long)f->_append_timestamp, (unsigned long long)f->_submit_timestamp,
               (unsigned long long)f->_start_timestamp, (unsigned long long)f->_end_timestamp,
               f->_pci_address[0] ? f->_pci_address : "-", f->_engine_ordinal, f->_engine_index,
               (unsigned long long)f->_mem_op_id);
        break;
      }
      case PTI_VIEW_DEVICE_SYNCHRONIZATION: {
        pti_view_record_synchronization* s = (void*)r;
        printf("T SYNC %u %u %u %u %llu %llu %u %d\n", (unsigned)s->_synch_type, s->_api_id,
               s->_correlation_id, s->_thread_id, (unsigned long long)s->_start_timestamp,
               (unsigned long long)s->_end_timestamp, s->_number_wait_events, (int)s->_return_code);
        break;
      }
      case PTI_VIEW_EXT_KERNEL_LAUNCH:
        print_launch((const void*)r);
        break;
      case PTI_VIEW_EXT_COMMAND_EXECUTION: {
        pti_view_record_command_execution* x = (void*)r;
        printf("T EXEC %llu %u %u %u %llu\n", (unsigned long long)x->_operation_id, x->_correlation_id,
               x->_thread_id, x->_api_id, (unsigned long long)x->_submit_timestamp);
        break;
      }
      default:
        printf("T OTHER %d\n", (int)r->_view_kind);
    }
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

#define OKAY(call)                                                               \
  do {                                                                           \
    pti_result r_ = (call);                                                      \
    if (r_ != PTI_SUCCESS) {                                                     \
      fprintf(stderr, "ze_traced: %s: %s\n", #call, ptiResultTypeToString(r_)); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

static const pti_view_kind views[] = {PTI_VIEW_DRIVER_API,          PTI_VIEW_DEVICE_GPU_KERNEL,
                                      PTI_VIEW_DEVICE_CPU_KERNEL,   PTI_VIEW_DEVICE_GPU_MEM_COPY,
                                      PTI_VIEW_DEVICE_GPU_MEM_FILL, PTI_VIEW_DEVICE_SYNCHRONIZATION,
                                      PTI_VIEW_EXT_COMMAND_EXECUTION, PTI_VIEW_EXT_KERNEL_LAUNCH};
#define N_VIEWS (sizeof views / sizeof views[0])

/* The counters a tool reconciles against: pending, dropped, critical events. */
static int print_counters(void) {
  uint64_t pending = 99, dropped = 0, criticals = 0;
  OKAY(ptiViewGetPendingDeviceRecordCount(&pending));
  printf("T PENDING %llu\n", (unsigned long long)pending);
  for (size_t i = 0; i < N_VIEWS; ++i) {
    uint64_t n = 0;
    OKAY(ptiViewGetDroppedRecordCount(views[i], &n));
    dropped += n;
  }
  printf("T DROPPED %llu\n", (unsigned long long)dropped);
  for (int code = 0; code < 400; ++code) {
    uint64_t n = 0;
    if (ptiCallbackGetCriticalEventCount((pti_result)code, &n) == PTI_SUCCESS) criticals += n;
  }
  printf("T CRITICALS %llu\n", (unsigned long long)criticals);
  uint32_t intercepted = 0;
  OKAY(ptiGetInterceptedFunctionCount(PTI_API_GROUP_LEVELZERO, &intercepted));
  printf("T INTERCEPTED %u\n", intercepted);
  printf("T CBOVERFLOW %d\n", cb_overflow);
  printf("T PROBLEMS %d\n", problems);
  return 0;
}

/* PTI_TEST_CLOCK=backwards: a tool clock that goes backwards at every read (a buggy one). */
static uint64_t backwards_clock(void) {
  static _Atomic uint64_t t = 1ull << 50;
  return t -= 1000;
}

int main(void) {
  const char* clock = getenv("PTI_TEST_CLOCK");
  if (clock && strcmp(clock, "backwards") == 0) OKAY(ptiViewSetTimestampCallback(backwards_clock));
  pti_callback_subscriber sub;
  OKAY(ptiCallbackSubscribe(&sub, on_callback, NULL));
  OKAY(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_PTI_CRITICAL_EVENT));
  /* Naming a Level Zero function attaches the tracer, or says why it cannot. */
  pti_result enabled = ptiCallbackEnable(1, sub, PTI_API_GROUP_LEVELZERO, zeCommandListAppendLaunchKernel_id);
  printf("T ENABLE %s\n", ptiResultTypeToString(enabled));
  if (enabled != PTI_SUCCESS) {
    /* The program must run unchanged, untraced. */
    int rc = ze_workload();
    return rc || print_counters();
  }
  OKAY(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_DRIVER_API));
  OKAY(ptiCallbackEnable(0, sub, PTI_API_GROUP_LEVELZERO, zeKernelSetArgumentValue_id));

  OKAY(ptiViewSetCallbacks(requested, completed));
  for (size_t i = 0; i < N_VIEWS; ++i) OKAY(ptiViewEnable(views[i]));
  OKAY(ptiViewEnableDriverApiClass(1, PTI_API_CLASS_GPU_OPERATION_CORE, PTI_API_GROUP_LEVELZERO));
  OKAY(ptiViewEnableDriverApiClass(1, PTI_API_CLASS_HOST_OPERATION_SYNCHRONIZATION, PTI_API_GROUP_LEVELZERO));
  OKAY(ptiViewEnableDriverApi(1, PTI_API_GROUP_LEVELZERO, zeCommandQueueExecuteCommandLists_id));
  OKAY(ptiViewEnableDriverApi(1, PTI_API_GROUP_LEVELZERO, zeCommandListAppendBarrier_id));
  OKAY(ptiViewEnableDriverApi(1, PTI_API_GROUP_LEVELZERO, zeMemAllocDevice_id));

  int rc = ze_workload();

  OKAY(ptiFlushAllViews());
  OKAY(ptiCallbackUnsubscribe(sub));
  for (int i = 0; i < n_cb; ++i)
    printf("T CB %c %u %u %u %lld %s\n", cbs[i].site, cbs[i].id, cbs[i].corr, cbs[i].tid,
           (long long)cbs[i].rc, cbs[i].kernel[0] ? cbs[i].kernel : "-");
  return rc || print_counters() || problems != 0;
}
