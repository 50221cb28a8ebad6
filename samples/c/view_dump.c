/* libpti View API sample: enable views, run a workload, flush, print every record.
 *
 * The workload runs on libpti's simulated-call test backend (ptiSimulateApiCall), which drives
 * the same dispatch as the real interception layers: a SYCL kernel launch that enqueues an
 * OpenCL kernel, under a pushed external correlation ID, a failing clFinish, and a Level Zero
 * copy. Records are read only with the view API of pti_view.h.
 *
 * Build: cc -Iinclude samples/c/view_dump.c -Ltarget/debug -lpti -o view_dump
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_runtime_sycl_api_ids.h"
#include "pti/pti_view.h"

#define CHECK(call)                                                         \
  do {                                                                      \
    pti_result r_ = (call);                                                 \
    if (r_ != PTI_SUCCESS) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, ptiResultTypeToString(r_)); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

static void requested(unsigned char** buf, size_t* size) {
  *size = 64 * 1024;
  *buf = aligned_alloc(8, *size);
}

static void print_api(const pti_view_record_api* r) {
  const char* name = "?";
  ptiViewGetApiIdName(r->_api_group, r->_api_id, &name);
  printf("%-8s %-32s corr %-4u tid %-7u %8llu ns  status %d\n",
         r->_view_kind._view_kind == PTI_VIEW_RUNTIME_API ? "runtime" : "driver", name, r->_correlation_id,
         r->_thread_id, (unsigned long long)(r->_end_timestamp - r->_start_timestamp), (int)r->_return_code);
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* rec = NULL;
  while (ptiViewGetNextRecord(buf, used, &rec) == PTI_SUCCESS) {
    switch (rec->_view_kind) {
      case PTI_VIEW_DRIVER_API:
      case PTI_VIEW_RUNTIME_API:
        print_api((const pti_view_record_api*)rec);
        break;
      case PTI_VIEW_EXTERNAL_CORRELATION: {
        const pti_view_record_external_correlation* e = (const void*)rec;
        printf("external corr %-4u <- kind %u id %llu\n", e->_correlation_id, (unsigned)e->_external_kind,
               (unsigned long long)e->_external_id);
        break;
      }
      case PTI_VIEW_COLLECTION_OVERHEAD: {
        const pti_view_record_overhead* o = (const void*)rec;
        printf("overhead %-13s %llu events, %llu ns of libpti time\n", ptiViewOverheadKindToString(o->_overhead_kind),
               (unsigned long long)o->_overhead_count, (unsigned long long)o->_overhead_duration_ns);
        break;
      }
      default:
        printf("record of kind %u\n", (unsigned)rec->_view_kind);
    }
  }
  free(buf);
}

static int32_t work(void* status) {
  volatile uint64_t acc = 0;
  for (int i = 0; i < 20000; i++) acc += (uint64_t)i * i;
  return status ? *(int32_t*)status : 0;
}

static int32_t sycl_launch(void* unused) {
  (void)unused;
  int32_t s = 0;
  ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clEnqueueNDRangeKernel_id, NULL, "vector_add", NULL, work, NULL, &s);
  return s;
}

int main(void) {
  printf("libpti %s: View API demo on the simulated-call test backend (no GPU runtime)\n", ptiVersionString());
  CHECK(ptiViewSetCallbacks(requested, completed));
  CHECK(ptiViewEnable(PTI_VIEW_DRIVER_API));
  CHECK(ptiViewEnable(PTI_VIEW_RUNTIME_API));
  CHECK(ptiViewEnable(PTI_VIEW_EXTERNAL_CORRELATION));
  CHECK(ptiViewEnable(PTI_VIEW_COLLECTION_OVERHEAD));

  int32_t status = 0, failing = -5;
  CHECK(ptiViewPushExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, 1001));
  CHECK(ptiSimulateApiCall(PTI_API_GROUP_SYCL, urEnqueueKernelLaunch_id, NULL, "vector_add", NULL, sycl_launch,
                           NULL, &status));
  uint64_t popped;
  CHECK(ptiViewPopExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, &popped));
  CHECK(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, work, &failing, &status));
  CHECK(ptiSimulateApiCall(PTI_API_GROUP_LEVELZERO, zeCommandListAppendMemoryCopy_id, NULL, NULL, NULL, work, NULL,
                           &status));
  CHECK(ptiFlushAllViews());

  uint64_t dropped = 0;
  CHECK(ptiViewGetDroppedRecordCount(PTI_VIEW_DRIVER_API, &dropped));
  printf("driver API records dropped: %llu\n", (unsigned long long)dropped);
  CHECK(ptiViewDisable(PTI_VIEW_DRIVER_API));
  CHECK(ptiViewDisable(PTI_VIEW_RUNTIME_API));
  return 0;
}
