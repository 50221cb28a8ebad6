/* What the every-command programs (cl_every_enqueue.c, ze_every_append.c) share: a tool with the
 * driver-API view and every device view, large buffers, and a tally of device records by the
 * API ID of the call whose correlation ID they carry; note() keeps what each function submitted;
 * report() prints, per function that succeeded,
 *   "E <name> <api id> <commands submitted> <device records> <counted without record>"
 * then "D <records dropped>" and "P <device records pending>". */
#ifndef PTI_TESTS_EVERY_COMMAND_H_
#define PTI_TESTS_EVERY_COMMAND_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pti/pti_ext.h"
#include "pti/pti_view.h"
#include "pti_okay.h"

#define REPS 3
#define MAX_CORR (1u << 20)

static const pti_view_kind VIEWS[] = {PTI_VIEW_DRIVER_API,          PTI_VIEW_DEVICE_GPU_KERNEL,
                                      PTI_VIEW_DEVICE_CPU_KERNEL,   PTI_VIEW_DEVICE_GPU_MEM_COPY,
                                      PTI_VIEW_DEVICE_GPU_MEM_FILL, PTI_VIEW_DEVICE_SYNCHRONIZATION};
#define N_VIEWS (sizeof VIEWS / sizeof VIEWS[0])

/* correlation ID -> API ID of the driver-API record, and the device records' correlation IDs. */
static uint32_t api_of[MAX_CORR];
static uint32_t device_corr[1 << 16];
static size_t n_device;

static void requested(unsigned char** buf, size_t* size) {
  *size = 16u << 20;
  *buf = aligned_alloc(8, *size);
}

/* The correlation ID of a device record; 0 for other kinds. */
static uint32_t device_correlation(const pti_view_record_base* r) {
  switch (r->_view_kind) {
    case PTI_VIEW_DEVICE_GPU_KERNEL:
    case PTI_VIEW_DEVICE_CPU_KERNEL:
      return ((const pti_view_record_kernel*)(const void*)r)->_correlation_id;
    case PTI_VIEW_DEVICE_GPU_MEM_COPY:
      return ((const pti_view_record_memory_copy*)(const void*)r)->_correlation_id;
    case PTI_VIEW_DEVICE_GPU_MEM_FILL:
      return ((const pti_view_record_memory_fill*)(const void*)r)->_correlation_id;
    case PTI_VIEW_DEVICE_SYNCHRONIZATION:
      return ((const pti_view_record_synchronization*)(const void*)r)->_correlation_id;
    default:
      return 0;
  }
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buf, used, &r) == PTI_SUCCESS && r) {
    if (r->_view_kind == PTI_VIEW_DRIVER_API) {
      const pti_view_record_api* a = (const void*)r;
      if (a->_correlation_id < MAX_CORR) api_of[a->_correlation_id] = a->_api_id;
    } else if (r->_view_kind != PTI_VIEW_EXTERNAL_CORRELATION &&
               n_device < sizeof device_corr / sizeof device_corr[0]) {
      device_corr[n_device++] = device_correlation(r);
    }
  }
  free(buf);
}

/* Sets the tool up: buffers, and every view above. */
static void start_views(void) {
  OKAY(ptiViewSetCallbacks(requested, completed));
  for (size_t i = 0; i < N_VIEWS; ++i) OKAY(ptiViewEnable(VIEWS[i]));
}

/* Per function attempted: its name, ID and the commands its successful calls submitted. */
static struct {
  const char* name;
  uint32_t id;
  int submitted;
} tried[64];
static size_t n_tried;

/* Notes a call of function `id` that succeeded (`ok`) or failed with `status` (then the function
 * is not offered: said with a "U" line and left out of the report). Returns `ok`. */
static int note(const char* name, uint32_t id, int ok, long long status) {
  size_t i = 0;
  while (i < n_tried && tried[i].id != id) i++;
  if (i == n_tried && n_tried < sizeof tried / sizeof tried[0]) {
    tried[n_tried].name = name;
    tried[n_tried].id = id;
    n_tried++;
  }
  if (ok) {
    tried[i].submitted++;
    return 1;
  }
  printf("U %s failed with %lld\n", name, status);
  tried[i].id = 0;
  return 0;
}

/* After the last flush: the E lines for `group`, then D and P. */
static void report(pti_api_group_id group) {
  for (size_t i = 0; i < n_tried; i++) {
    if (!tried[i].id) continue;
    int records = 0;
    for (size_t d = 0; d < n_device; d++)
      if (device_corr[d] < MAX_CORR && api_of[device_corr[d]] == tried[i].id) records++;
    uint64_t counted = 0;
    OKAY(ptiViewGetUnrecordedCommandCount(group, tried[i].id, &counted));
    printf("E %s %u %d %d %llu\n", tried[i].name, tried[i].id, tried[i].submitted, records,
           (unsigned long long)counted);
  }
  uint64_t dropped = 0, pending = 0;
  for (size_t i = 0; i < N_VIEWS; ++i) {
    uint64_t n = 0;
    OKAY(ptiViewGetDroppedRecordCount(VIEWS[i], &n));
    dropped += n;
  }
  OKAY(ptiViewGetPendingDeviceRecordCount(&pending));
  printf("D %llu\nP %llu\n", (unsigned long long)dropped, (unsigned long long)pending);
}

#endif /* PTI_TESTS_EVERY_COMMAND_H_ */
