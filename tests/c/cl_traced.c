/* The OpenCL workload under a tool built on libpti's public API: callbacks for every OpenCL
 * function but one, the driver-API view for a few classes and functions, and every device view.
 * Linking libpti puts it into OPENCL_LAYERS before main. After the workload it flushes and
 * prints what it received ("T ..." lines) for the test to check against the workload's lines. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cl_workload.h"
#include "pti/pti_callback.h"
#include "pti/pti_cl_params.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"

#include "print_launch.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int problems;

#define MAX_CB 200000
static struct cb {
  char site;
  uint32_t id, corr, tid;
  int32_t rc;
  char kernel[32];
} cbs[MAX_CB];
static int n_cb, cb_overflow;

static void problem(const char* what, uint32_t id, uint32_t corr) {
  fprintf(stderr, "cl_traced: %s (api %u, correlation %u)\n", what, id, corr);
  problems++;
}

static int late_launch, late_enabled;

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
  if (group != PTI_API_GROUP_OPENCL) problem("callback for a group other than OpenCL", api_id, 0);
  struct cb e = {0};
  e.site = d->_site == PTI_SITE_ENTER ? 'E' : 'X';
  e.id = api_id;
  e.corr = d->_correlation_id;
  e.tid = (uint32_t)syscall(SYS_gettid);
  e.rc = d->_return_code ? *(const cl_int*)d->_return_code : -99999;
  if (d->_kernel_name) snprintf(e.kernel, sizeof e.kernel, "%s", d->_kernel_name);
  if (d->_site == PTI_SITE_ENTER) {
    *d->_local_data = d->_correlation_id;
    if (d->_return_code) problem("_return_code set at ENTER", api_id, e.corr);
  } else if (*d->_local_data != d->_correlation_id) {
    problem("_local_data not kept from ENTER to EXIT", api_id, e.corr);
  }
  /* The parameter structs point at the real arguments. */
  if (api_id == clEnqueueReadBuffer_id || api_id == clEnqueueWriteBuffer_id) {
    const pti_cl_params_clEnqueueReadBuffer* p = d->_args;
    if (!p || (*p->size != (size_t)(1 << 16) * sizeof(float) && *p->size != 4096)) problem("clEnqueue{Read,Write}Buffer _args size", api_id, e.corr);
  }
  if (api_id == clEnqueueNDRangeKernel_id) {
    const pti_cl_params_clEnqueueNDRangeKernel* p = d->_args;
    if (!p || *p->work_dim != 1 || !d->_kernel_name) problem("clEnqueueNDRangeKernel _args or _kernel_name", api_id, e.corr);
    /* PTI_TEST_LAUNCH_VIEW=late: the launch view is enabled once the first launch has returned. */
    if (late_launch && e.site == 'X' && !late_enabled) {
      late_enabled = 1;
      if (ptiViewEnable(PTI_VIEW_EXT_KERNEL_LAUNCH) != PTI_SUCCESS) problem("late ptiViewEnable", api_id, e.corr);
      pthread_mutex_lock(&lock);
      printf("T LATE %u\n", e.corr);
      pthread_mutex_unlock(&lock);
    }
  }
  if ((api_id == clCreateBuffer_id || api_id == clEnqueueNDRangeKernel_id) && !d->_backend_context_handle)
    problem("no context handle", api_id, e.corr);
  pthread_mutex_lock(&lock);
  if (n_cb < MAX_CB) cbs[n_cb++] = e;
  else cb_overflow = 1;
  pthread_mutex_unlock(&lock);
}

/* PTI_TEST_TOOL=small: 4 KiB buffers, and a flush from inside every buffer_completed, so that
 * buffers fill in the middle of harvests and flushes re-enter libpti from tool code. */
static int small_tool;

static void requested(unsigned char** buffer, size_t* size) {
  *size = small_tool ? 4096 : 1 << 20;
  *buffer = malloc(*size);
}

static const char* memcpy_name(pti_view_memcpy_type t) { return ptiViewMemcpyTypeToString(t); }

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
        printf("T KERNEL %s %u %u %llu %llu %llu %llu %p %s %llu\n", k->_name, k->_correlation_id,
               k->_thread_id, (unsigned long long)k->_append_timestamp,
               (unsigned long long)k->_submit_timestamp, (unsigned long long)k->_start_timestamp,
               (unsigned long long)k->_end_timestamp, k->_queue_handle,
               r->_view_kind == PTI_VIEW_DEVICE_CPU_KERNEL ? "cpu" : "gpu", (unsigned long long)k->_kernel_id);
        break;
      }
      case PTI_VIEW_EXT_KERNEL_LAUNCH:
        print_launch((const void*)r);
        break;
      case PTI_VIEW_DEVICE_GPU_MEM_COPY: {
        pti_view_record_memory_copy_v2* c = (void*)r;
        printf("T COPY %s %s %llu %u %u %llu %llu %llu %llu\n", c->_name, memcpy_name(c->_memcpy_type),
               (unsigned long long)c->_bytes, c->_correlation_id, c->_thread_id,
               (unsigned long long)c->_append_timestamp, (unsigned long long)c->_submit_timestamp,
               (unsigned long long)c->_start_timestamp, (unsigned long long)c->_end_timestamp);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_FILL: {
        pti_view_record_memory_fill_v2* f = (void*)r;
        printf("T FILL %s %llu %u %u %llu %llu %llu %llu\n", f->_name, (unsigned long long)f->_bytes,
               f->_correlation_id, f->_thread_id, (unsigned long long)f->_append_timestamp,
               (unsigned long long)f->_submit_timestamp, (unsigned long long)f->_start_timestamp,
               (unsigned long long)f->_end_timestamp);
        break;
      }
      case PTI_VIEW_DEVICE_SYNCHRONIZATION: {
        pti_view_record_synchronization* s = (void*)r;
        printf("T SYNC %u %u %u %u %llu %llu %u %d\n", (unsigned)s->_synch_type, s->_api_id,
               s->_correlation_id, s->_thread_id, (unsigned long long)s->_start_timestamp,
               (unsigned long long)s->_end_timestamp, s->_number_wait_events, (int)s->_return_code);
        break;
      }
      default:
        printf("T OTHER %d\n", (int)r->_view_kind);
    }
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
  if (small_tool && ptiFlushAllViews() != PTI_SUCCESS) problem("flush from buffer_completed failed", 0, 0);
}

#define OKAY(call)                                                          \
  do {                                                                      \
    pti_result r_ = (call);                                                 \
    if (r_ != PTI_SUCCESS) {                                                \
      fprintf(stderr, "cl_traced: %s: %s\n", #call, ptiResultTypeToString(r_)); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

int main(void) {
  const char* tool = getenv("PTI_TEST_TOOL");
  small_tool = tool && strcmp(tool, "small") == 0;
  const char* launch_view = getenv("PTI_TEST_LAUNCH_VIEW");
  late_launch = launch_view && strcmp(launch_view, "late") == 0;
  pti_callback_subscriber sub;
  OKAY(ptiCallbackSubscribe(&sub, on_callback, NULL));
  OKAY(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_DRIVER_API));
  OKAY(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_PTI_CRITICAL_EVENT));
  OKAY(ptiCallbackEnable(0, sub, PTI_API_GROUP_OPENCL, clGetPlatformInfo_id));

  OKAY(ptiViewSetCallbacks(requested, completed));
  pti_view_kind views[] = {PTI_VIEW_DRIVER_API, PTI_VIEW_DEVICE_GPU_KERNEL, PTI_VIEW_DEVICE_CPU_KERNEL,
                           PTI_VIEW_DEVICE_GPU_MEM_COPY, PTI_VIEW_DEVICE_GPU_MEM_FILL,
                           PTI_VIEW_DEVICE_SYNCHRONIZATION, PTI_VIEW_EXT_KERNEL_LAUNCH};
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i)
    if (!late_launch || views[i] != PTI_VIEW_EXT_KERNEL_LAUNCH) OKAY(ptiViewEnable(views[i]));
  OKAY(ptiViewEnableDriverApiClass(1, PTI_API_CLASS_GPU_OPERATION_CORE, PTI_API_GROUP_OPENCL));
  OKAY(ptiViewEnableDriverApiClass(1, PTI_API_CLASS_HOST_OPERATION_SYNCHRONIZATION, PTI_API_GROUP_OPENCL));
  OKAY(ptiViewEnableDriverApi(1, PTI_API_GROUP_OPENCL, clCreateBuffer_id));
  OKAY(ptiViewEnableDriverApi(1, PTI_API_GROUP_OPENCL, clEnqueueBarrierWithWaitList_id));
  OKAY(ptiViewEnableDriverApi(1, PTI_API_GROUP_OPENCL, clEnqueueMarkerWithWaitList_id));

  int rc = cl_workload();

  OKAY(ptiFlushAllViews());
  OKAY(ptiCallbackUnsubscribe(sub));
  for (int i = 0; i < n_cb; ++i)
    printf("T CB %c %u %u %u %d %s\n", cbs[i].site, cbs[i].id, cbs[i].corr, cbs[i].tid, cbs[i].rc,
           cbs[i].kernel[0] ? cbs[i].kernel : "-");
  uint64_t pending = 99, dropped = 0, criticals = 0;
  OKAY(ptiViewGetPendingDeviceRecordCount(&pending));
  printf("T PENDING %llu\n", (unsigned long long)pending);
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) {
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
  OKAY(ptiGetInterceptedFunctionCount(PTI_API_GROUP_OPENCL, &intercepted));
  printf("T INTERCEPTED %u\n", intercepted);
  printf("T CBOVERFLOW %d\n", cb_overflow);
  printf("T PROBLEMS %d\n", problems);
  return rc != 0 || problems != 0;
}
