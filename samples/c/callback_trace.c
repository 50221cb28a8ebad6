/* The Callback API on a real OpenCL program: callbacks enabled per API function, each call
 * timed from ENTER to EXIT with the subscriber's _local_data slot, critical events printed.
 *
 * Linking libpti is all it takes: libpti's constructor makes itself an OpenCL layer before the
 * program's first OpenCL call.
 *
 * Build: cc -Iinclude samples/c/callback_trace.c samples/c/workload.c -lpti -lOpenCL */
#define _GNU_SOURCE /* clock_gettime, CLOCK_MONOTONIC_RAW */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "pti/pti_callback.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "workload.h"

#define CHECK(call)                                                           \
  do {                                                                        \
    pti_result r_ = (call);                                                   \
    if (r_ != PTI_SUCCESS) {                                                  \
      fprintf(stderr, "%s failed: %s\n", #call, ptiResultTypeToString(r_));   \
      return 1;                                                               \
    }                                                                         \
  } while (0)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The functions this tool listens to, and what it saw of them. */
static struct {
  uint32_t id;
  unsigned calls;
  uint64_t total_ns;
} traced[] = {{clBuildProgram_id, 0, 0},         {clEnqueueWriteBuffer_id, 0, 0},
              {clEnqueueFillBuffer_id, 0, 0},    {clEnqueueNDRangeKernel_id, 0, 0},
              {clEnqueueReadBuffer_id, 0, 0},    {clFinish_id, 0, 0}};
#define N_TRACED (sizeof traced / sizeof traced[0])
static unsigned critical_events;

static void on_callback(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                        uint32_t api_id, void* cb_data) {
  (void)user_data, (void)group;
  if (domain == PTI_DOMAIN_PTI_CRITICAL_EVENT) {
    pti_critical_event_callback_data* event = cb_data;
    printf("critical event %s: %s\n", ptiResultTypeToString(event->_pti_event), event->_message);
    critical_events++;
    return;
  }
  pti_apicall_callback_data* call = cb_data;
  if (call->_site == PTI_SITE_ENTER) {
    /* _local_data is this subscriber's slot for this call, kept until its EXIT. */
    *call->_local_data = now_ns();
    return;
  }
  uint64_t ns = now_ns() - *call->_local_data;
  const char* name = "?";
  ptiViewGetApiIdName(PTI_API_GROUP_OPENCL, api_id, &name);
  printf("%-24s correlation %-5u %8.1f us  status %d%s%s\n", name, call->_correlation_id, ns / 1e3,
         call->_return_code ? *(const cl_int*)call->_return_code : 0, call->_kernel_name ? "  kernel " : "",
         call->_kernel_name ? call->_kernel_name : "");
  for (size_t i = 0; i < N_TRACED; ++i) {
    if (traced[i].id == api_id) {
      traced[i].calls++;
      traced[i].total_ns += ns;
    }
  }
}

int main(void) {
  pti_callback_subscriber subscriber;
  CHECK(ptiCallbackSubscribe(&subscriber, on_callback, NULL));
  CHECK(ptiCallbackEnableDomain(1, subscriber, PTI_DOMAIN_PTI_CRITICAL_EVENT));
  for (size_t i = 0; i < N_TRACED; ++i)
    CHECK(ptiCallbackEnable(1, subscriber, PTI_API_GROUP_OPENCL, traced[i].id));

  if (run_workload(2, 1) != 0) return 1;

  CHECK(ptiCallbackUnsubscribe(subscriber));
  printf("\n%-24s %6s %12s\n", "function", "calls", "total us");
  unsigned total_calls = 0;
  for (size_t i = 0; i < N_TRACED; ++i) {
    const char* name = "?";
    ptiViewGetApiIdName(PTI_API_GROUP_OPENCL, traced[i].id, &name);
    printf("%-24s %6u %12.1f\n", name, traced[i].calls, traced[i].total_ns / 1e3);
    total_calls += traced[i].calls;
  }
  printf("%u calls traced, %u critical events\n", total_calls, critical_events);
  return total_calls == 0; /* nothing traced: the OpenCL loader did not load libpti */
}
