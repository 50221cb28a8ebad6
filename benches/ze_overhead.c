/* What libpti's Level Zero tracer costs the program, per call, in one of six modes (argv[1]),
 * over the simulated driver (tests/ze-sim) through the real loader:
 *   off        no tracing layer (run with PTI_LEVEL_ZERO=0 and ZE_ENABLE_TRACING_LAYER unset);
 *   layer      the loader's tracing layer is loaded, libpti has not attached (no tool enabled
 *              anything): what the loader charges;
 *   tracer     as layer, plus a tracer of this program's with empty callbacks on the two
 *              functions measured: what the loader charges for calling a tracer;
 *   attached   libpti's tracer is attached (the tool enabled one unrelated function): each call
 *              runs libpti's prologue and epilogue, which find nobody interested;
 *   callbacks  a tool receives ENTER/EXIT for every Level Zero call (an empty callback);
 *   views      a tool records every call and every command (API and kernel views);
 *   apiview    a tool records every call (API view only);
 *   floor      as off, but the launches time themselves, as a program that wants each kernel's
 *              device time and nothing else would: an event from a kernel-timestamp pool per
 *              launch, each read with zeEventQueryKernelTimestamp after the wait and reset for
 *              the next round (the floor that libpti's kernel view is measured against).
 * Three loops: zeKernelSetArgumentValue (a pure host call), kernel launches on an immediate
 * list, and 256-byte host-to-host copies on it, each with a zeEventHostSynchronize every 64.
 * Prints "RESULT <mode> setarg <ns> launch <ns> copy <ns>" (per call, wall time). Run by
 * benches/level_zero_overhead.py, which interleaves the modes. */
#define _POSIX_C_SOURCE 200809L
#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pti/pti_callback.h"
#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_view.h"

#define BATCH 64

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void on_call(void* u, pti_callback_domain d, pti_api_group_id g, uint32_t id, void* data) {
  (void)u, (void)d, (void)g, (void)id, (void)data;
}

static void ZE_APICALL empty_setarg(ze_kernel_set_argument_value_params_t* p, ze_result_t r, void* u, void** i) {
  (void)p, (void)r, (void)u, (void)i;
}
static void ZE_APICALL empty_launch(ze_command_list_append_launch_kernel_params_t* p, ze_result_t r, void* u,
                                    void** i) {
  (void)p, (void)r, (void)u, (void)i;
}

/* A tracer of the benchmark's own, with empty callbacks (mode "tracer"). */
static int own_tracer(void) {
  zel_tracer_desc_t desc = {ZEL_STRUCTURE_TYPE_TRACER_DESC, NULL, NULL};
  zel_tracer_handle_t tracer;
  return zelTracerCreate(&desc, &tracer) ||
         zelTracerKernelSetArgumentValueRegisterCallback(tracer, ZEL_REGISTER_PROLOGUE, empty_setarg) ||
         zelTracerKernelSetArgumentValueRegisterCallback(tracer, ZEL_REGISTER_EPILOGUE, empty_setarg) ||
         zelTracerCommandListAppendLaunchKernelRegisterCallback(tracer, ZEL_REGISTER_PROLOGUE, empty_launch) ||
         zelTracerCommandListAppendLaunchKernelRegisterCallback(tracer, ZEL_REGISTER_EPILOGUE, empty_launch) ||
         zelTracerSetEnabled(tracer, 1);
}

static void requested(unsigned char** buffer, size_t* size) {
  *size = 4 << 20;
  *buffer = malloc(*size);
}
static size_t records;
static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) records++;
  free(buffer);
}

#define CHECK(call)                                              \
  do {                                                           \
    ze_result_t r_ = (call);                                     \
    if (r_ != ZE_RESULT_SUCCESS) {                               \
      fprintf(stderr, "%s failed: 0x%x\n", #call, (unsigned)r_); \
      exit(2);                                                   \
    }                                                            \
  } while (0)

static int start_tool(const char* mode) {
  pti_callback_subscriber sub;
  if (!strcmp(mode, "attached"))
    return ptiCallbackSubscribe(&sub, on_call, NULL) ||
           ptiCallbackEnable(1, sub, PTI_API_GROUP_LEVELZERO, zeDeviceGetStatus_id);
  if (!strcmp(mode, "callbacks"))
    return ptiCallbackSubscribe(&sub, on_call, NULL) || ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_DRIVER_API);
  if (!strcmp(mode, "views")) {
    pti_view_kind kinds[] = {PTI_VIEW_DRIVER_API, PTI_VIEW_DEVICE_GPU_KERNEL, PTI_VIEW_DEVICE_CPU_KERNEL,
                             PTI_VIEW_DEVICE_SYNCHRONIZATION};
    if (ptiViewSetCallbacks(requested, completed)) return 1;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
      if (ptiViewEnable(kinds[i])) return 1;
  }
  if (!strcmp(mode, "apiview")) return ptiViewSetCallbacks(requested, completed) || ptiViewEnable(PTI_VIEW_DRIVER_API);
  return 0;
}

/* The launch loop (benches/callgrind counts inside it: `--toggle-collect=launch_loop`): `n`
 * launches on `list`, a wait every BATCH; with `timed` (the floor), each launch signals its own
 * kernel-timestamp event, read after the wait. Returns the device ticks the floor read. */
__attribute__((noinline)) static uint64_t launch_loop(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                                                      ze_event_handle_t* timed, ze_event_handle_t done, int n) {
  ze_group_count_t one = {1, 1, 1};
  uint64_t device_ticks = 0;
  for (int i = 0; i < n; i++) {
    int slot = i % BATCH, last = slot == BATCH - 1 || i == n - 1;
    /* The floor waits on the batch's last timed event; the others on `done`. */
    ze_event_handle_t signal = timed ? timed[slot] : last ? done : NULL;
    CHECK(zeCommandListAppendLaunchKernel(list, kernel, &one, signal, 0, NULL));
    if (last) {
      CHECK(zeEventHostSynchronize(timed ? timed[slot] : done, UINT64_MAX));
      if (timed)
        for (int j = 0; j <= slot; j++) {
          ze_kernel_timestamp_result_t ts;
          CHECK(zeEventQueryKernelTimestamp(timed[j], &ts));
          device_ticks += ts.global.kernelEnd - ts.global.kernelStart;
          CHECK(zeEventHostReset(timed[j]));
        }
      else
        CHECK(zeEventHostReset(done));
    }
  }
  return device_ticks;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "attached";
  int setarg_n = argc > 2 ? atoi(argv[2]) : 200000, launch_n = argc > 3 ? atoi(argv[3]) : 20000;
  if (start_tool(mode)) return 2;
  CHECK(zeInit(0));
  if (!strcmp(mode, "tracer") && own_tracer()) return 2;
  uint32_t n = 1;
  ze_driver_handle_t driver;
  ze_device_handle_t device;
  CHECK(zeDriverGet(&n, &driver));
  n = 1;
  CHECK(zeDeviceGet(driver, &n, &device));
  ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
  ze_context_handle_t context;
  CHECK(zeContextCreate(driver, &cdesc, &context));
  static const uint8_t binary[] = "ze-sim kernels";
  ze_module_desc_t mdesc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, sizeof binary, binary,
                            NULL, NULL};
  ze_module_handle_t module;
  CHECK(zeModuleCreate(context, device, &mdesc, &module, NULL));
  ze_kernel_desc_t kdesc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "spin"};
  ze_kernel_handle_t kernel;
  CHECK(zeKernelCreate(module, &kdesc, &kernel));
  ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
                                   ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t list;
  CHECK(zeCommandListCreateImmediate(context, device, &qdesc, &list));
  ze_event_pool_desc_t pdesc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
  ze_event_pool_handle_t pool;
  CHECK(zeEventPoolCreate(context, &pdesc, 1, &device, &pool));
  ze_event_desc_t edesc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t done;
  CHECK(zeEventCreate(pool, &edesc, &done));
  /* The floor's events: one per launch of a batch, from a kernel-timestamp pool. */
  int floor = !strcmp(mode, "floor");
  ze_event_pool_desc_t tdesc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                                ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, BATCH};
  ze_event_pool_handle_t timed_pool;
  ze_event_handle_t timed[BATCH];
  CHECK(zeEventPoolCreate(context, &tdesc, 1, &device, &timed_pool));
  for (uint32_t i = 0; i < BATCH; i++) {
    ze_event_desc_t d = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, i, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    CHECK(zeEventCreate(timed_pool, &d, &timed[i]));
  }
  uint64_t device_ticks = 0;

  uint32_t zero = 0;
  double t0 = now_ns();
  for (int i = 0; i < setarg_n; i++) CHECK(zeKernelSetArgumentValue(kernel, 0, sizeof zero, &zero));
  double setarg = (now_ns() - t0) / setarg_n;

  t0 = now_ns();
  device_ticks += launch_loop(list, kernel, floor ? timed : NULL, done, launch_n);
  double launch = (now_ns() - t0) / launch_n;

  static char src[256], dst[256];
  t0 = now_ns();
  for (int i = 0; i < launch_n; i++) {
    int last = i % BATCH == BATCH - 1 || i == launch_n - 1;
    CHECK(zeCommandListAppendMemoryCopy(list, dst, src, sizeof src, last ? done : NULL, 0, NULL));
    if (last) {
      CHECK(zeEventHostSynchronize(done, UINT64_MAX));
      CHECK(zeEventHostReset(done));
    }
  }
  double copy = (now_ns() - t0) / launch_n;

  for (uint32_t i = 0; i < BATCH; i++) CHECK(zeEventDestroy(timed[i]));
  CHECK(zeEventPoolDestroy(timed_pool));

  CHECK(zeEventDestroy(done));
  CHECK(zeEventPoolDestroy(pool));
  CHECK(zeCommandListDestroy(list));
  CHECK(zeKernelDestroy(kernel));
  CHECK(zeModuleDestroy(module));
  CHECK(zeContextDestroy(context));
  if ((!strcmp(mode, "views") || !strcmp(mode, "apiview")) && ptiFlushAllViews()) return 2;
  printf("RESULT %s setarg %.1f launch %.1f copy %.1f records %zu device_ticks %llu\n", mode, setarg, launch, copy,
         records, (unsigned long long)device_ticks);
  return 0;
}
