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

#include "every_command.h"

/* note() for a Level Zero status. */
static int ze_note(const char* name, uint32_t id, ze_result_t status) {
  return note(name, id, status == ZE_RESULT_SUCCESS, (long long)status);
}

/* Calls `call` REPS times, stopping at the first failure. */
#define TRY(name, call)                                       \
  for (int rep_ = 0; rep_ < REPS; rep_++) {                   \
    if (!ze_note(#name, name##_id, (call))) break;               \
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
  start_views();

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
    if (!ze_note("zeCommandListAppendSignalEvent", zeCommandListAppendSignalEvent_id, zeCommandListAppendSignalEvent(list, event))) break;
    if (!ze_note("zeCommandListAppendWaitOnEvents", zeCommandListAppendWaitOnEvents_id, zeCommandListAppendWaitOnEvents(list, 1, &event))) break;
    if (!ze_note("zeCommandListAppendEventReset", zeCommandListAppendEventReset_id, zeCommandListAppendEventReset(list, event))) break;
  }
  OKAY(ptiFlushAllViews());

  report(PTI_API_GROUP_LEVELZERO);

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
