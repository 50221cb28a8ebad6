/* The View API on a real OpenCL program: buffers given to libpti, views enabled, the workload
 * run, a flush, and every record printed with its correlation ID, the number that ties each
 * piece of device work to the API call that caused it. Dropped records are reported.
 *
 * Build: cc -Iinclude samples/c/view_dump.c samples/c/workload.c -lpti -lOpenCL */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "pti/pti_ext.h"
#include "pti/pti_view.h"
#include "workload.h"

#define CHECK(call)                                                           \
  do {                                                                        \
    pti_result r_ = (call);                                                   \
    if (r_ != PTI_SUCCESS) {                                                  \
      fprintf(stderr, "%s failed: %s\n", #call, ptiResultTypeToString(r_));   \
      return 1;                                                               \
    }                                                                         \
  } while (0)

static unsigned records;

/* libpti asks for buffers; the tool owns them. */
static void buffer_requested(unsigned char** buffer, size_t* size) {
  *size = 1 << 20;
  *buffer = malloc(*size);
}

static const char* api_name(pti_api_group_id group, uint32_t id) {
  const char* name = "?";
  ptiViewGetApiIdName(group, id, &name);
  return name;
}

/* libpti hands a buffer back: walk its records, then free it. */
static void buffer_completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) {
    records++;
    switch (r->_view_kind) {
      case PTI_VIEW_DRIVER_API: {
        pti_view_record_api* a = (pti_view_record_api*)r;
        printf("api     %-5u %-26s %9.3f us  thread %u\n", a->_correlation_id, api_name(a->_api_group, a->_api_id),
               (a->_end_timestamp - a->_start_timestamp) / 1e3, a->_thread_id);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_KERNEL:
      case PTI_VIEW_DEVICE_CPU_KERNEL: {
        pti_view_record_kernel_v2* k = (pti_view_record_kernel_v2*)r;
        printf("kernel  %-5u %-26s %9.3f us  queued %.3f us before it started\n", k->_correlation_id, k->_name,
               (k->_end_timestamp - k->_start_timestamp) / 1e3,
               /* signed: a device clock may put start a little before append */
               ((double)k->_start_timestamp - (double)k->_append_timestamp) / 1e3);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_COPY: {
        pti_view_record_memory_copy_v2* c = (pti_view_record_memory_copy_v2*)r;
        printf("copy    %-5u %-26s %9.3f us  %" PRIu64 " bytes %s\n", c->_correlation_id, c->_name,
               (c->_end_timestamp - c->_start_timestamp) / 1e3, c->_bytes, ptiViewMemcpyTypeToString(c->_memcpy_type));
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_FILL: {
        pti_view_record_memory_fill_v2* f = (pti_view_record_memory_fill_v2*)r;
        printf("fill    %-5u %-26s %9.3f us  %" PRIu64 " bytes\n", f->_correlation_id, f->_name,
               (f->_end_timestamp - f->_start_timestamp) / 1e3, f->_bytes);
        break;
      }
      default:
        printf("record of kind %d\n", (int)r->_view_kind);
    }
  }
  free(buffer);
}

int main(void) {
  CHECK(ptiViewSetCallbacks(buffer_requested, buffer_completed));
  const pti_view_kind views[] = {PTI_VIEW_DRIVER_API, PTI_VIEW_DEVICE_GPU_KERNEL, PTI_VIEW_DEVICE_CPU_KERNEL,
                                 PTI_VIEW_DEVICE_GPU_MEM_COPY, PTI_VIEW_DEVICE_GPU_MEM_FILL};
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) CHECK(ptiViewEnable(views[i]));

  if (run_workload(1, 1) != 0) return 1;

  /* Everything finished is delivered before ptiFlushAllViews returns. */
  CHECK(ptiFlushAllViews());
  uint64_t dropped = 0;
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) {
    uint64_t n = 0;
    CHECK(ptiViewGetDroppedRecordCount(views[i], &n));
    dropped += n;
  }
  printf("%u records, %" PRIu64 " dropped\n", records, dropped);
  return records == 0 || dropped != 0;
}
