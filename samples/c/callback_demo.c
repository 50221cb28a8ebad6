/* libpti Callback API demo on the simulated-call test backend.
 *
 * Until libpti's real backends exist, this is the project's main job: it subscribes, enables
 * calls per API ID and per domain, listens for critical events, and then drives libpti's test
 * backend (ptiSimulateApiCall), which runs functions through the same dispatch that the OpenCL,
 * Level Zero and SYCL interception will use. It prints every callback it receives and times each
 * call from ENTER to EXIT with the subscriber's _local_data slot. No GPU runtime is involved.
 *
 * Build: cc -Iinclude samples/c/callback_demo.c -Ltarget/debug -lpti -o callback_demo
 */
#define _GNU_SOURCE /* clock_gettime, CLOCK_MONOTONIC_RAW */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pti/pti_callback.h"
#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_runtime_sycl_api_ids.h"

#define CHECK(call)                                                                       \
  do {                                                                                    \
    pti_result r_ = (call);                                                               \
    if (r_ != PTI_SUCCESS) {                                                              \
      fprintf(stderr, "%s failed: %s\n", #call, ptiResultTypeToString(r_));               \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char* group_name(pti_api_group_id group) {
  switch (group) {
    case PTI_API_GROUP_LEVELZERO: return "Level Zero";
    case PTI_API_GROUP_OPENCL: return "OpenCL";
    case PTI_API_GROUP_SYCL: return "SYCL";
    default: return "?";
  }
}

static int depth;
static unsigned critical_events;

static void on_callback(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                        uint32_t api_id, void* cb_data) {
  (void)user_data;
  if (domain == PTI_DOMAIN_PTI_CRITICAL_EVENT) {
    pti_critical_event_callback_data* event = (pti_critical_event_callback_data*)cb_data;
    printf("critical event %s: %s\n", ptiResultTypeToString(event->_pti_event), event->_message);
    critical_events++;
    return;
  }
  pti_apicall_callback_data* call = (pti_apicall_callback_data*)cb_data;
  if (call->_site == PTI_SITE_ENTER) {
    *call->_local_data = now_ns();
    printf("[corr %3u] %*sENTER %s (%s, id %u)%s%s\n", call->_correlation_id, 2 * depth, "",
           call->_api_name, group_name(group), api_id, call->_kernel_name ? " kernel=" : "",
           call->_kernel_name ? call->_kernel_name : "");
    depth++;
  } else {
    depth--;
    uint64_t elapsed = now_ns() - *call->_local_data;
    printf("[corr %3u] %*sEXIT  %s -> %d after %llu ns\n", call->_correlation_id, 2 * depth, "",
           call->_api_name, *(const int32_t*)call->_return_code, (unsigned long long)elapsed);
  }
}

/* The simulated functions' bodies: a little real work, then a status. */
static int32_t do_work(void* user_data) {
  volatile uint64_t acc = 0;
  for (int i = 0; i < 20000; i++) acc += (uint64_t)i * i;
  return user_data ? *(int32_t*)user_data : 0;
}

/* A SYCL kernel submission whose Unified Runtime call enqueues an OpenCL kernel. */
static int32_t sycl_launch(void* user_data) {
  (void)user_data;
  int32_t status = 0;
  ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clEnqueueNDRangeKernel_id, NULL, "vector_add", NULL,
                     do_work, NULL, &status);
  return status;
}

int main(void) {
  printf("libpti %s: Callback API demo on the simulated-call test backend (no GPU runtime)\n",
         ptiVersionString());
  pti_callback_subscriber subscriber = NULL;
  CHECK(ptiCallbackSubscribe(&subscriber, on_callback, NULL));
  CHECK(ptiCallbackEnableDomain(1, subscriber, PTI_DOMAIN_RUNTIME_API));
  CHECK(ptiCallbackEnableDomain(1, subscriber, PTI_DOMAIN_PTI_CRITICAL_EVENT));
  CHECK(ptiCallbackEnable(1, subscriber, PTI_API_GROUP_OPENCL, clEnqueueNDRangeKernel_id));
  CHECK(ptiCallbackEnable(1, subscriber, PTI_API_GROUP_OPENCL, clFinish_id));
  CHECK(ptiCallbackEnable(1, subscriber, PTI_API_GROUP_LEVELZERO, zeCommandListAppendMemoryCopy_id));

  int32_t status = 0, cl_out_of_resources = -5;
  CHECK(ptiSimulateApiCall(PTI_API_GROUP_SYCL, urEnqueueKernelLaunch_id, NULL, "vector_add", NULL,
                           sycl_launch, NULL, &status));
  CHECK(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, do_work,
                           &cl_out_of_resources, &status));
  CHECK(ptiSimulateApiCall(PTI_API_GROUP_LEVELZERO, zeCommandListAppendMemoryCopy_id, NULL, NULL,
                           NULL, do_work, NULL, &status));
  /* Not enabled: runs without callbacks. */
  CHECK(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFlush_id, NULL, NULL, NULL, do_work, NULL, &status));

  CHECK(ptiCallbackUnsubscribe(subscriber));
  uint64_t dropped = 0;
  CHECK(ptiCallbackGetCriticalEventCount(PTI_ERROR_CALLBACK_PANICKED, &dropped));
  printf("critical events raised: %u (panicked callbacks counted: %llu)\n", critical_events,
         (unsigned long long)dropped);
  return 0;
}
