/* Every append function of Level Zero that the simulated driver offers, called REPS times on an
 * immediate list under a tool with the driver-API view and every device view enabled, to check
 * that each command a traced call appends is accounted: recorded (a device record sharing the
 * call's correlation ID) or counted (ptiViewGetUnrecordedCommandCount).
 *
 * Prints, per function:
 *   "E <name> <api id> <commands appended> <device records> <counted without record>"
 * then "D <records dropped>" and "P <device records pending>". The test lists the append
 * functions the fixture does not offer. */
#define _POSIX_C_SOURCE 200809L
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"

#define REPS 3
#define MAX_CORR (1u << 20)

#define OKAY(call)                                                   \
  do {                                                               \
    pti_result r_ = (call);                                          \
    if (r_ != PTI_SUCCESS) {                                         \
      fprintf(stderr, "%s failed: %d\n", #call, (int)r_);            \
      exit(1);                                                       \
    }                                                                \
  } while (0)

/* correlation ID -> API ID of the driver-API record, and the device records' correlation IDs. */
static uint32_t api_of[MAX_CORR];
static uint32_t device_corr[1 << 16];
static size_t n_device;

static void requested(unsigned char** buf, size_t* size) {
  *size = 16u << 20;
  *buf = aligned_alloc(8, *size);
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buf, used, &r) == PTI_SUCCESS && r) {
    uint32_t corr = 0;
    switch (r->_view_kind) {
      case PTI_VIEW_DRIVER_API: {
        const pti_view_record_api* a = (const void*)r;
        if (a->_correlation_id < MAX_CORR) api_of[a->_correlation_id] = a->_api_id;
        continue;
      }
      case PTI_VIEW_DEVICE_GPU_KERNEL:
      case PTI_VIEW_DEVICE_CPU_KERNEL:
        corr = ((const pti_view_record_kernel*)(const void*)r)->_correlation_id;
        break;
      case PTI_VIEW_DEVICE_GPU_MEM_COPY:
        corr = ((const pti_view_record_memory_copy*)(const void*)r)->_correlation_id;
        break;
      case PTI_VIEW_DEVICE_GPU_MEM_FILL:
        corr = ((const pti_view_record_memory_fill*)(const void*)r)->_correlation_id;
        break;
      case PTI_VIEW_DEVICE_SYNCHRONIZATION:
        corr = ((const pti_view_record_synchronization*)(const void*)r)->_correlation_id;
        break;
      default:
        continue;
    }
    if (n_device < sizeof device_corr / sizeof device_corr[0]) device_corr[n_device++] = corr;
  }
  free(buf);
}

/* Per function attempted: its name, ID and the commands its successful calls submitted. */
static struct {
  const char* name;
  uint32_t id;
  int submitted;
} tried[64];
static size_t n_tried;

static int note(const char* name, uint32_t id, ze_result_t err) {
  size_t i = 0;
  while (i < n_tried && tried[i].id != id) i++;
  if (i == n_tried) {
    tried[n_tried].name = name;
    tried[n_tried].id = id;
    n_tried++;
  }
  if (err == ZE_RESULT_SUCCESS) {
    tried[i].submitted++;
    return 1;
  }
  printf("U %s failed with 0x%x\n", name, (unsigned)err);
  tried[i].id = 0; /* not offered after all */
  return 0;
}

/* Calls `call` REPS times, stopping at the first failure. */
#define TRY(name, call)                                       \
  for (int rep_ = 0; rep_ < REPS; rep_++) {                   \
    if (!note(#name, name##_id, (call))) break;               \
  }

#define ZE(call)                                                         \
  do {                                                                   \
    ze_result_t r_ = (call);                                             \
    if (r_ != ZE_RESULT_SUCCESS) {                                       \
      fprintf(stderr, "%s failed: 0x%x\n", #call, (unsigned)r_);         \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

int main(void) {
  OKAY(ptiViewSetCallbacks(requested, completed));
  const pti_view_kind views[] = {PTI_VIEW_DRIVER_API, PTI_VIEW_DEVICE_GPU_KERNEL, PTI_VIEW_DEVICE_CPU_KERNEL,
                                 PTI_VIEW_DEVICE_GPU_MEM_COPY, PTI_VIEW_DEVICE_GPU_MEM_FILL,
                                 PTI_VIEW_DEVICE_SYNCHRONIZATION};
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) OKAY(ptiViewEnable(views[i]));

  ZE(zeInit(0));
  uint32_t n = 1;
  ze_driver_handle_t driver = NULL;
  ZE(zeDriverGet(&n, &driver));
  ze_device_handle_t device = NULL;
  n = 1;
  ZE(zeDeviceGet(driver, &n, &device));
  ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
  ze_context_handle_t context = NULL;
  ZE(zeContextCreate(driver, &cdesc, &context));
  static const uint8_t binary[] = "ze-sim kernels";
  ze_module_desc_t mdesc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, sizeof binary,
                            binary, NULL, NULL};
  ze_module_handle_t module = NULL;
  ZE(zeModuleCreate(context, device, &mdesc, &module, NULL));
  ze_kernel_desc_t kdesc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "scale"};
  ze_kernel_handle_t kernel = NULL;
  ZE(zeKernelCreate(module, &kdesc, &kernel));
  ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
                                   ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t list = NULL;
  ZE(zeCommandListCreateImmediate(context, device, &qdesc, &list));
  ze_event_pool_desc_t pdesc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
  ze_event_pool_handle_t pool = NULL;
  ZE(zeEventPoolCreate(context, &pdesc, 1, &device, &pool));
  ze_event_desc_t edesc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t event = NULL;
  ZE(zeEventCreate(pool, &edesc, &event));

  enum { BYTES = 4096 };
  ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  ze_device_mem_alloc_desc_t ddesc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
  void *a = NULL, *b = NULL;
  ZE(zeMemAllocShared(context, &ddesc, &hdesc, BYTES, 64, device, &a));
  ZE(zeMemAllocShared(context, &ddesc, &hdesc, BYTES, 64, device, &b));
  float factor = 2.0f;
  ZE(zeKernelSetArgumentValue(kernel, 0, sizeof a, &a));
  ZE(zeKernelSetArgumentValue(kernel, 1, sizeof factor, &factor));
  ZE(zeKernelSetGroupSize(kernel, 64, 1, 1));
  ze_group_count_t groups = {BYTES / sizeof(float) / 64, 1, 1};
  int pattern = 7;
  const void* ranges[1] = {a};
  size_t sizes[1] = {BYTES};
  uint32_t kernels = 1;

  TRY(zeCommandListAppendMemoryCopy, zeCommandListAppendMemoryCopy(list, b, a, BYTES, NULL, 0, NULL));
  TRY(zeCommandListAppendMemoryFill, zeCommandListAppendMemoryFill(list, a, &pattern, sizeof pattern, BYTES, NULL, 0, NULL));
  TRY(zeCommandListAppendLaunchKernel, zeCommandListAppendLaunchKernel(list, kernel, &groups, NULL, 0, NULL));
  TRY(zeCommandListAppendBarrier, zeCommandListAppendBarrier(list, NULL, 0, NULL));
  TRY(zeCommandListAppendMemoryRangesBarrier, zeCommandListAppendMemoryRangesBarrier(list, 1, sizes, ranges, NULL, 0, NULL));
  TRY(zeCommandListAppendMemoryPrefetch, zeCommandListAppendMemoryPrefetch(list, a, BYTES));
  TRY(zeCommandListAppendMemAdvise, zeCommandListAppendMemAdvise(list, device, a, BYTES, ZE_MEMORY_ADVICE_SET_READ_MOSTLY));
  TRY(zeCommandListAppendLaunchMultipleKernelsIndirect,
      zeCommandListAppendLaunchMultipleKernelsIndirect(list, 1, &kernel, &kernels, &groups, NULL, 0, NULL));
  for (int rep = 0; rep < REPS; rep++) {
    if (!note("zeCommandListAppendSignalEvent", zeCommandListAppendSignalEvent_id, zeCommandListAppendSignalEvent(list, event))) break;
    if (!note("zeCommandListAppendWaitOnEvents", zeCommandListAppendWaitOnEvents_id, zeCommandListAppendWaitOnEvents(list, 1, &event))) break;
    if (!note("zeCommandListAppendEventReset", zeCommandListAppendEventReset_id, zeCommandListAppendEventReset(list, event))) break;
  }
  OKAY(ptiFlushAllViews());

  for (size_t i = 0; i < n_tried; i++) {
    if (!tried[i].id) continue;
    int records = 0;
    for (size_t d = 0; d < n_device; d++)
      if (device_corr[d] < MAX_CORR && api_of[device_corr[d]] == tried[i].id) records++;
    uint64_t counted = 0;
    OKAY(ptiViewGetUnrecordedCommandCount(PTI_API_GROUP_LEVELZERO, tried[i].id, &counted));
    printf("E %s %u %d %d %llu\n", tried[i].name, tried[i].id, tried[i].submitted, records,
           (unsigned long long)counted);
  }
  uint64_t dropped = 0, pending = 0;
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) {
    uint64_t v = 0;
    OKAY(ptiViewGetDroppedRecordCount(views[i], &v));
    dropped += v;
  }
  OKAY(ptiViewGetPendingDeviceRecordCount(&pending));
  printf("D %llu\nP %llu\n", (unsigned long long)dropped, (unsigned long long)pending);

  ZE(zeMemFree(context, a));
  ZE(zeMemFree(context, b));
  ZE(zeEventDestroy(event));
  ZE(zeEventPoolDestroy(pool));
  ZE(zeCommandListDestroy(list));
  ZE(zeKernelDestroy(kernel));
  ZE(zeModuleDestroy(module));
  ZE(zeContextDestroy(context));
  return 0;
}
