/* Level Zero programs that do what programs and runtimes do on a real Intel GPU, one scenario
 * per run (`ze_gpu <scenario>`), over the simulated driver (tests/ze-sim, asynchronous as a GPU
 * is). Built twice from this file: `ze_gpu_plain`, the program alone, and `ze_gpu_traced`
 * (-DTRACED), the same program with a tool on libpti's view API in its process.
 *
 * The program prints what it submitted ("W EXPECT <KERNEL|COPY|FILL> <n>"), what it computed
 * ("W RESULT ..."), and what its own events tell it ("W OWN <label> <duration in ns>", from its
 * events' kernel timestamps, read as SYCL's event profiling reads them). The tool prints every
 * device record ("T REC <KIND> <name> <correlation> <start> <end>"), the records it lost
 * ("T LOST <KIND> <n>") and the critical events ("T CRITICAL ..."). tests/level_zero_gpu.rs
 * checks: submitted = records + counted losses; each record within 1 us of the command the
 * driver really ran (its ground truth); the program's own durations the same traced and alone.
 *
 * Scenarios: cb_chain (counter-based events re-armed by each append), ping_pong (UR v1's
 * discarded events reset inside the list), free_list (UR v2's counter-based events reused
 * without a reset), own_timestamps (the program reads its events' timestamps: counter-based,
 * mapped, reset in a re-executed regular list, re-executed counter-based), graph (capture and
 * replay, both routes), regular_ooo (a regular list out of order, run again and again),
 * pipelined (regular lists executed again before they completed), mutable (mutable command
 * lists and a clone), late_timestamps (timestamps written late), init_flags (zeInit's flags),
 * deep_stream (thousands of commands in flight at each wait), tiles, npu (work on an NPU, a
 * second driver), two_tracers (the workload run with Intel's PTI beside libpti: built with
 * -DINTEL_BESIDE and tests/c/intel_beside.c).
 *
 * Built against the newest Level Zero headers (.cache/level-zero), linked with the installed
 * loader. */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef TRACED
#include "pti/pti_callback.h"
#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"
#endif

#ifdef INTEL_BESIDE
/* tests/c/intel_beside.c: a tool on Intel's PTI in this process. */
void intel_beside_start(void);
void intel_beside_finish(void);
#endif

static ze_driver_handle_t driver;
static ze_context_handle_t context;
static ze_device_handle_t device;
static ze_module_handle_t module;
static ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
static long expected_kernels, expected_copies, expected_fills;

#define ZE(call)                                                                  \
  do {                                                                            \
    ze_result_t r_ = (call);                                                      \
    if (r_ != ZE_RESULT_SUCCESS) {                                                \
      fprintf(stderr, "ze_gpu: %s failed: 0x%x\n", #call, (unsigned)r_);          \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

/* A function of the extension route; exits if the driver does not serve it. */
static void* extension(const char* name) {
  void* f = NULL;
  ZE(zeDriverGetExtensionFunctionAddress(driver, name, &f));
  if (!f) {
    fprintf(stderr, "ze_gpu: the driver serves no %s\n", name);
    exit(2);
  }
  return f;
}

/* Intel's zexCounterBasedEventCreate2 and its descriptor (no Level Zero header declares them). */
typedef struct {
  uint32_t stype;
  const void* pNext;
  uint32_t flags;
  uint32_t signalScope;
  uint32_t waitScope;
} zex_counter_based_event_desc;
typedef ze_result_t (*zex_create_fn)(ze_context_handle_t, ze_device_handle_t, const void*,
                                     ze_event_handle_t*);
#define ZEX_IMMEDIATE 1u
#define ZEX_NON_IMMEDIATE 2u
#define ZEX_HOST_VISIBLE 4u
#define ZEX_KERNEL_TIMESTAMP 16u

/* The older graph functions Intel's driver serves (zex_graph.h: other argument orders). */
typedef ze_result_t (*graph_create_exp_fn)(ze_context_handle_t, ze_graph_handle_t*, void*);
typedef ze_result_t (*begin_capture_exp_fn)(ze_command_list_handle_t, void*);
typedef ze_result_t (*end_capture_exp_fn)(ze_command_list_handle_t, ze_graph_handle_t*, void*);
typedef ze_result_t (*instantiate_exp_fn)(ze_graph_handle_t, ze_executable_graph_handle_t*, void*);
typedef ze_result_t (*append_graph_exp_fn)(ze_command_list_handle_t, ze_executable_graph_handle_t,
                                           void*, ze_event_handle_t, uint32_t, ze_event_handle_t*);
typedef ze_result_t (*destroy_exp_fn)(void*);

/* === the program's helpers === */

static void expect_kernels(long n) { expected_kernels += n; }
static void expect_copies(long n) { expected_copies += n; }

static ze_kernel_handle_t spin_kernel(uint32_t microseconds) {
  ze_kernel_desc_t desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "spin"};
  ze_kernel_handle_t k = NULL;
  ZE(zeKernelCreate(module, &desc, &k));
  ZE(zeKernelSetArgumentValue(k, 0, sizeof microseconds, &microseconds));
  return k;
}

static ze_command_list_handle_t immediate_on(ze_device_handle_t dev, int in_order,
                                             uint32_t ordinal) {
  ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, ordinal, 0,
                                  in_order ? ZE_COMMAND_QUEUE_FLAG_IN_ORDER : 0,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                  ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t list = NULL;
  ZE(zeCommandListCreateImmediate(context, dev, &desc, &list));
  return list;
}

static ze_command_list_handle_t immediate(int in_order) { return immediate_on(device, in_order, 0); }

static ze_command_list_handle_t regular(ze_command_list_flags_t flags, const void* next) {
  ze_command_list_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, next, 0, flags};
  ze_command_list_handle_t list = NULL;
  ZE(zeCommandListCreate(context, device, &desc, &list));
  return list;
}

static ze_command_queue_handle_t queue(void) {
  ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                  ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_queue_handle_t q = NULL;
  ZE(zeCommandQueueCreate(context, device, &desc, &q));
  return q;
}

/* A pool of `count` events with `flags`; counter-based (its descriptor first in pNext) when
 * `cb_flags` is not 0. */
static ze_event_pool_handle_t pool(ze_event_pool_flags_t flags, uint32_t cb_flags, uint32_t count) {
  ze_event_pool_counter_based_exp_desc_t cb = {ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC,
                                               NULL, cb_flags};
  ze_event_pool_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, cb_flags ? &cb : NULL, flags,
                               count};
  ze_event_pool_handle_t p = NULL;
  ZE(zeEventPoolCreate(context, &desc, 1, &device, &p));
  return p;
}

static ze_event_handle_t event(ze_event_pool_handle_t p, uint32_t index) {
  ze_event_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, index, ZE_EVENT_SCOPE_FLAG_HOST,
                          ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t e = NULL;
  ZE(zeEventCreate(p, &desc, &e));
  return e;
}

static ze_event_handle_t zex_event(uint32_t flags) {
  static zex_create_fn create;
  if (!create) create = extension("zexCounterBasedEventCreate2");
  zex_counter_based_event_desc desc = {0, NULL, flags, ZE_EVENT_SCOPE_FLAG_HOST, 0};
  ze_event_handle_t e = NULL;
  ZE(create(context, device, &desc, &e));
  return e;
}

static const ze_group_count_t one = {1, 1, 1};

static void launch(ze_command_list_handle_t list, ze_kernel_handle_t k, ze_event_handle_t signal,
                   uint32_t n_waits, ze_event_handle_t* waits) {
  ZE(zeCommandListAppendLaunchKernel(list, k, &one, signal, n_waits, waits));
}

/* A kernel's duration in ns from its kernel timestamps, as SYCL's event profiling computes it
 * (masked to the valid bits, one wrap allowed, scaled by the timer resolution). */
static unsigned long long duration_ns(const ze_kernel_timestamp_result_t* t) {
  uint64_t mask = props.kernelTimestampValidBits >= 64 ? ~0ull
                                                        : (1ull << props.kernelTimestampValidBits) - 1;
  uint64_t start = t->global.kernelStart & mask, end = t->global.kernelEnd & mask;
  if (end < start) end += mask + 1;
  return (unsigned long long)((end - start) * 1e9 / (double)props.timerResolution);
}

/* Prints what the program's own `e` tells of its command: "W OWN <label> <ns>". */
static void own(const char* label, ze_event_handle_t e) {
  ze_kernel_timestamp_result_t t;
  ZE(zeEventQueryKernelTimestamp(e, &t));
  printf("W OWN %s %llu\n", label, duration_ns(&t));
}

static void finish(void) {
  printf("W EXPECT KERNEL %ld\nW EXPECT COPY %ld\nW EXPECT FILL %ld\n", expected_kernels,
         expected_copies, expected_fills);
  fflush(stdout);
}

static void setup(ze_init_flags_t flags) {
  uint32_t n = 1;
  ZE(zeInit(flags));
  ZE(zeDriverGet(&n, &driver));
  n = 1;
  ZE(zeDeviceGet(driver, &n, &device));
  ZE(zeDeviceGetProperties(device, &props));
  ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
  ZE(zeContextCreate(driver, &cdesc, &context));
  ze_module_desc_t mdesc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, 4,
                            (const uint8_t*)"none", NULL, NULL};
  ZE(zeModuleCreate(context, device, &mdesc, &module, NULL));
}

/* === scenarios === */

/* Counter-based events re-armed by each append (a pool with the counter-based descriptor, with
 * and without timestamps), no host wait until the end: the last kernel's duration is what the
 * program's event reports. */
static void cb_chain(void) {
  ze_command_list_handle_t list = immediate(1);
  ze_event_handle_t timed = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                                       ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE, 1), 0);
  ze_event_handle_t plain = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                       ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE, 1), 0);
  for (uint32_t i = 0; i < 8; ++i) launch(list, spin_kernel(40 + 20 * i), i % 2 ? timed : plain, 0, NULL);
  expect_kernels(8);
  ZE(zeEventHostSynchronize(timed, UINT64_MAX));
  ZE(zeEventHostSynchronize(plain, UINT64_MAX));
  own("cb_chain_last", timed);
}

/* UR v1's discarded events on an in-order queue: two events, each reset inside the list right
 * after a barrier on it, and reused; on an immediate list and on a regular list run 3 times. */
static void ping_pong_on(ze_command_list_handle_t list, ze_event_handle_t* e, int n) {
  for (int i = 0; i < n; ++i) {
    ze_event_handle_t mine = e[i % 2];
    launch(list, spin_kernel(30), mine, 0, NULL);
    ZE(zeCommandListAppendBarrier(list, NULL, 1, &mine));
    ZE(zeCommandListAppendEventReset(list, mine));
  }
}

static void ping_pong(void) {
  ze_event_pool_handle_t p = pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 0, 4);
  ze_event_handle_t e[2] = {event(p, 0), event(p, 1)};
  ze_command_list_handle_t list = immediate(1);
  ping_pong_on(list, e, 10);
  expect_kernels(10);
  ZE(((ze_pfnCommandListHostSynchronize_t)extension("zeCommandListHostSynchronize"))(list, UINT64_MAX));
  ze_event_handle_t r[2] = {event(p, 2), event(p, 3)};
  ze_command_list_handle_t reg = regular(ZE_COMMAND_LIST_FLAG_IN_ORDER, NULL);
  ping_pong_on(reg, r, 4);
  ZE(zeCommandListClose(reg));
  ze_command_queue_handle_t q = queue();
  for (int run = 0; run < 3; ++run) {
    ZE(zeCommandQueueExecuteCommandLists(q, 1, &reg, NULL));
    ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
  }
  expect_kernels(12);
}

/* UR v2: counter-based events (zexCounterBasedEventCreate2) from a free list, reused without a
 * reset for later commands while earlier ones may still run; one wait at the end. */
static void free_list(void) {
  ze_command_list_handle_t list = immediate(1);
  ze_event_handle_t e[4];
  for (int i = 0; i < 4; ++i)
    e[i] = zex_event(ZEX_IMMEDIATE | ZEX_NON_IMMEDIATE | ZEX_HOST_VISIBLE | (i % 2 ? ZEX_KERNEL_TIMESTAMP : 0));
  for (int i = 0; i < 16; ++i) launch(list, spin_kernel(20 + 5 * (i % 3)), e[i % 4], 0, NULL);
  expect_kernels(16);
  ZE(((ze_pfnCommandListHostSynchronize_t)extension("zeCommandListHostSynchronize"))(list, UINT64_MAX));
  own("free_list_last", e[3]);
}

/* The program reads its own events' timestamps after each wait. */
static void own_timestamps(void) {
  ze_command_list_handle_t list = immediate(1);
  /* Counter-based, with timestamps (UR v2 with profiling). */
  ze_event_handle_t cb = zex_event(ZEX_IMMEDIATE | ZEX_NON_IMMEDIATE | ZEX_HOST_VISIBLE | ZEX_KERNEL_TIMESTAMP);
  launch(list, spin_kernel(300), cb, 0, NULL);
  ZE(zeEventHostSynchronize(cb, UINT64_MAX));
  own("immediate_cb", cb);
  /* Kernel timestamps mapped to the host clock. */
  ze_event_handle_t mapped = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP, 0, 1), 0);
  launch(list, spin_kernel(400), mapped, 0, NULL);
  ZE(zeEventHostSynchronize(mapped, UINT64_MAX));
  own("mapped", mapped);
  ze_pfnEventQueryKernelTimestampsExt_t ext = extension("zeEventQueryKernelTimestampsExt");
  uint32_t count = 1;
  ze_kernel_timestamp_result_t raw;
  ze_synchronized_timestamp_result_ext_t synced;
  ze_event_query_kernel_timestamps_results_ext_properties_t results = {
      ZE_STRUCTURE_TYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_RESULTS_EXT_PROPERTIES, NULL, &raw, &synced};
  ZE(ext(mapped, device, &count, &results));
  printf("W OWN mapped_host %llu\n",
         (unsigned long long)(synced.global.kernelEnd - synced.global.kernelStart));
  expect_kernels(2);
  /* A regular list resetting its event inside the list, executed three times. */
  ze_event_handle_t reset = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 0, 1), 0);
  ze_command_list_handle_t reg = regular(ZE_COMMAND_LIST_FLAG_IN_ORDER, NULL);
  ZE(zeCommandListAppendEventReset(reg, reset));
  launch(reg, spin_kernel(250), reset, 0, NULL);
  ZE(zeCommandListClose(reg));
  ze_command_queue_handle_t q = queue();
  char label[64];
  for (int run = 0; run < 3; ++run) {
    ZE(zeCommandQueueExecuteCommandLists(q, 1, &reg, NULL));
    ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
    snprintf(label, sizeof label, "regular_reset_%d", run);
    own(label, reset);
  }
  expect_kernels(3);
  /* A regular list signalling a counter-based event, executed twice. */
  ze_event_handle_t rcb = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                                     ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_NON_IMMEDIATE, 1), 0);
  ze_command_list_handle_t reg2 = regular(ZE_COMMAND_LIST_FLAG_IN_ORDER, NULL);
  launch(reg2, spin_kernel(350), rcb, 0, NULL);
  ZE(zeCommandListClose(reg2));
  for (int run = 0; run < 2; ++run) {
    ZE(zeCommandQueueExecuteCommandLists(q, 1, &reg2, NULL));
    ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
    snprintf(label, sizeof label, "regular_cb_%d", run);
    own(label, rcb);
  }
  expect_kernels(2);
  /* A regular event on a list that is not in order. */
  ze_command_list_handle_t ooo = immediate(0);
  ze_event_handle_t plain = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 0, 1), 0);
  launch(ooo, spin_kernel(200), plain, 0, NULL);
  ZE(zeEventHostSynchronize(plain, UINT64_MAX));
  own("out_of_order", plain);
  expect_kernels(1);
  /* What the program learns of a pool and events it created without timestamps: their flags,
   * and the driver's answer to a timestamp query (a profiler may add timestamps, not show them). */
  ze_event_pool_handle_t bare = pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 0, 1);
  ze_pfnEventPoolGetFlags_t get_flags = extension("zeEventPoolGetFlags");
  ze_event_pool_flags_t flags = 0;
  ZE(get_flags(bare, &flags));
  printf("W RESULT pool_flags 0x%x\n", (unsigned)flags);
  ze_event_handle_t untimed = event(bare, 0);
  ze_event_handle_t untimed_cb = zex_event(ZEX_IMMEDIATE | ZEX_HOST_VISIBLE);
  launch(list, spin_kernel(20), untimed, 0, NULL);
  launch(list, spin_kernel(20), untimed_cb, 0, NULL);
  ZE(zeEventHostSynchronize(untimed_cb, UINT64_MAX));
  ZE(zeEventHostSynchronize(untimed, UINT64_MAX));
  expect_kernels(2);
  ze_kernel_timestamp_result_t t;
  printf("W RESULT untimed_query 0x%x\n", (unsigned)zeEventQueryKernelTimestamp(untimed, &t));
  printf("W RESULT untimed_cb_query 0x%x\n", (unsigned)zeEventQueryKernelTimestamp(untimed_cb, &t));
}

/* Graph capture and replay on an in-order immediate list, through the older `…Exp` functions
 * (served by the driver by name) and the specification's `…Ext` ones (the same route here:
 * loader 1.8.12 predates them). Replays waited for, then two replays in a row. */
static void graph_route(int exp) {
  ze_command_list_handle_t list = immediate(1);
  ze_event_handle_t e = zex_event(ZEX_IMMEDIATE | ZEX_NON_IMMEDIATE | ZEX_HOST_VISIBLE | ZEX_KERNEL_TIMESTAMP);
  ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  void *a = NULL, *b = NULL;
  ZE(zeMemAllocHost(context, &hdesc, 4096, 64, &a));
  ZE(zeMemAllocHost(context, &hdesc, 4096, 64, &b));
  ze_graph_handle_t graph = NULL;
  ze_executable_graph_handle_t exec = NULL;
  if (exp) {
    ZE(((begin_capture_exp_fn)extension("zeCommandListBeginGraphCaptureExp"))(list, NULL));
  } else {
    ZE(((ze_pfnGraphCreateExt_t)extension("zeGraphCreateExt"))(context, NULL, &graph));
    ZE(((ze_pfnCommandListBeginCaptureIntoGraphExt_t)extension("zeCommandListBeginCaptureIntoGraphExt"))(list, graph, NULL));
  }
  launch(list, spin_kernel(60), NULL, 0, NULL);
  ZE(zeCommandListAppendMemoryCopy(list, b, a, 4096, NULL, 0, NULL));
  launch(list, spin_kernel(80), e, 0, NULL);
  if (exp) {
    ZE(((end_capture_exp_fn)extension("zeCommandListEndGraphCaptureExp"))(list, &graph, NULL));
    ZE(((instantiate_exp_fn)extension("zeCommandListInstantiateGraphExp"))(graph, &exec, NULL));
  } else {
    ze_graph_handle_t same = NULL;
    ZE(((ze_pfnCommandListEndGraphCaptureExt_t)extension("zeCommandListEndGraphCaptureExt"))(list, NULL, &same));
    ZE(((ze_pfnGraphInstantiateExt_t)extension("zeGraphInstantiateExt"))(graph, NULL, &exec));
  }
  /* Nothing ran at capture. */
  usleep(2000);
  ze_pfnCommandListHostSynchronize_t sync = extension("zeCommandListHostSynchronize");
  char label[64];
  for (int run = 0; run < 5; ++run) {
    if (exp)
      ZE(((append_graph_exp_fn)extension("zeCommandListAppendGraphExp"))(list, exec, NULL, NULL, 0, NULL));
    else
      ZE(((ze_pfnCommandListAppendGraphExt_t)extension("zeCommandListAppendGraphExt"))(list, exec, NULL, NULL, 0, NULL));
    /* Runs 1 and 2 follow each other without a wait. */
    if (run == 1) continue;
    ZE(sync(list, UINT64_MAX));
    snprintf(label, sizeof label, "graph_%s_%d", exp ? "exp" : "ext", run);
    own(label, e);
  }
  expect_kernels(10);
  expect_copies(5);
  ((destroy_exp_fn)extension(exp ? "zeExecutableGraphDestroyExp" : "zeExecutableGraphDestroyExt"))(exec);
  ((destroy_exp_fn)extension(exp ? "zeGraphDestroyExp" : "zeGraphDestroyExt"))(graph);
  ZE(zeMemFree(context, a));
  ZE(zeMemFree(context, b));
}

static void graph(void) {
  graph_route(1);
  graph_route(0);
}

/* A regular list that is not in order, six kernels without events, executed three times with a
 * wait after each: nothing may serialise it. */
static void regular_ooo(void) {
  ze_command_list_handle_t reg = regular(0, NULL);
  for (int i = 0; i < 6; ++i) launch(reg, spin_kernel(40), NULL, 0, NULL);
  ZE(zeCommandListClose(reg));
  ze_command_queue_handle_t q = queue();
  for (int run = 0; run < 3; ++run) {
    ZE(zeCommandQueueExecuteCommandLists(q, 1, &reg, NULL));
    ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
  }
  expect_kernels(18);
}

/* Regular lists executed again before the previous execution completed (as UR command buffers
 * and SYCL graphs submit): on a queue, on an immediate list, and with the program's own
 * counter-based event; one wait at the end of each. */
static void pipelined(void) {
  ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  void *a = NULL, *b = NULL;
  ZE(zeMemAllocHost(context, &hdesc, 4096, 64, &a));
  ZE(zeMemAllocHost(context, &hdesc, 4096, 64, &b));
  ze_event_handle_t cb = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                                    ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_NON_IMMEDIATE, 1), 0);
  ze_command_list_handle_t reg = regular(ZE_COMMAND_LIST_FLAG_IN_ORDER, NULL);
  for (int i = 0; i < 4; ++i) launch(reg, spin_kernel(30 + 10 * i), i == 3 ? cb : NULL, 0, NULL);
  ZE(zeCommandListAppendMemoryCopy(reg, b, a, 4096, NULL, 0, NULL));
  ZE(zeCommandListClose(reg));
  ze_command_queue_handle_t q = queue();
  for (int run = 0; run < 5; ++run) ZE(zeCommandQueueExecuteCommandLists(q, 1, &reg, NULL));
  ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
  own("pipelined_queue_last", cb);
  expect_kernels(20);
  expect_copies(5);
  ze_command_list_handle_t list = immediate(1);
  ze_pfnCommandListImmediateAppendCommandListsExp_t run_exp =
      extension("zeCommandListImmediateAppendCommandListsExp");
  for (int run = 0; run < 3; ++run) ZE(run_exp(list, 1, &reg, NULL, 0, NULL));
  ZE(((ze_pfnCommandListHostSynchronize_t)extension("zeCommandListHostSynchronize"))(list, UINT64_MAX));
  own("pipelined_immediate_last", cb);
  expect_kernels(12);
  expect_copies(3);
  ZE(zeMemFree(context, a));
  ZE(zeMemFree(context, b));
}

/* A mutable command list: its kernel's signal event set and cleared, its group count and its
 * kernel changed, between executions (each waited for, as the specification asks). */
static void mutable_list(void) {
  ze_mutable_command_list_exp_desc_t mdesc = {ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_DESC, NULL, 0};
  ze_command_list_handle_t reg =
      regular(ZE_COMMAND_LIST_FLAG_IN_ORDER | ZE_COMMAND_LIST_FLAG_EXP_CLONEABLE, &mdesc);
  ze_pfnCommandListGetNextCommandIdExp_t next_id = extension("zeCommandListGetNextCommandIdExp");
  ze_pfnCommandListGetNextCommandIdWithKernelsExp_t next_id_k =
      extension("zeCommandListGetNextCommandIdWithKernelsExp");
  ze_pfnCommandListUpdateMutableCommandSignalEventExp_t set_signal =
      extension("zeCommandListUpdateMutableCommandSignalEventExp");
  ze_pfnCommandListUpdateMutableCommandsExp_t update = extension("zeCommandListUpdateMutableCommandsExp");
  ze_pfnCommandListUpdateMutableCommandKernelsExp_t set_kernels =
      extension("zeCommandListUpdateMutableCommandKernelsExp");
  ze_mutable_command_id_exp_desc_t idesc = {ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_ID_EXP_DESC, NULL, 0};
  uint64_t first = 0, second = 0;
  ZE(next_id(reg, &idesc, &first));
  launch(reg, spin_kernel(100), NULL, 0, NULL);
  ze_kernel_handle_t choices[2] = {spin_kernel(50), NULL};
  ze_kernel_desc_t sdesc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "scale"};
  ZE(zeKernelCreate(module, &sdesc, &choices[1]));
  float* c = NULL;
  ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  ZE(zeMemAllocHost(context, &hdesc, 64 * sizeof(float), 64, (void**)&c));
  for (int i = 0; i < 64; ++i) c[i] = 1.0f;
  float k = 2.0f;
  ZE(zeKernelSetArgumentValue(choices[1], 0, sizeof c, &c));
  ZE(zeKernelSetArgumentValue(choices[1], 1, sizeof k, &k));
  ZE(next_id_k(reg, &idesc, 2, choices, &second));
  launch(reg, choices[0], NULL, 0, NULL);
  ZE(zeCommandListClose(reg));
  ze_command_queue_handle_t q = queue();
  ze_event_handle_t e = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 0, 1), 0);
  for (int run = 0; run < 4; ++run) {
    if (run == 1) ZE(set_signal(reg, first, e));
    if (run == 2) {
      ZE(set_kernels(reg, 1, &second, &choices[1]));
      ze_group_count_t groups = {64, 1, 1};
      ze_mutable_group_count_exp_desc_t gdesc = {ZE_STRUCTURE_TYPE_MUTABLE_GROUP_COUNT_EXP_DESC, NULL, second, &groups};
      ze_mutable_commands_exp_desc_t cdesc = {ZE_STRUCTURE_TYPE_MUTABLE_COMMANDS_EXP_DESC, &gdesc, 0};
      ZE(update(reg, &cdesc));
    }
    if (run == 3) ZE(set_signal(reg, first, NULL));
    ZE(zeCommandQueueExecuteCommandLists(q, 1, &reg, NULL));
    ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
    if (run == 1 || run == 2) {
      char label[32];
      snprintf(label, sizeof label, "mutable_%d", run);
      own(label, e);
    }
  }
  expect_kernels(8);
  /* A clone of the list as it is now (a spin, and the scale kernel over 64 groups), run twice. */
  ze_pfnCommandListCreateCloneExp_t clone = extension("zeCommandListCreateCloneExp");
  ze_command_list_handle_t copy = NULL;
  ZE(clone(reg, &copy));
  for (int run = 0; run < 2; ++run) {
    ZE(zeCommandQueueExecuteCommandLists(q, 1, &copy, NULL));
    ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
  }
  expect_kernels(4);
  ZE(zeCommandListDestroy(copy));
  double sum = 0;
  for (int i = 0; i < 64; ++i) sum += c[i];
  printf("W RESULT mutable %.1f\n", sum);
}

/* Counter-based events whose timestamps the device writes late: the query answers NOT_READY
 * after the status said done (run with ZE_SIM_TS_LAG_NS above ZE_SIM_TS_TIMEOUT_MS). */
static void late_timestamps(void) {
  ze_command_list_handle_t list = immediate(1);
  ze_event_handle_t e[5];
  for (int i = 0; i < 5; ++i) {
    e[i] = zex_event(ZEX_IMMEDIATE | ZEX_HOST_VISIBLE | ZEX_KERNEL_TIMESTAMP);
    launch(list, spin_kernel(30), e[i], 0, NULL);
  }
  launch(list, spin_kernel(30), NULL, 0, NULL);
  expect_kernels(6);
  ZE(zeEventHostSynchronize(e[4], UINT64_MAX));
  ZE(((ze_pfnCommandListHostSynchronize_t)extension("zeCommandListHostSynchronize"))(list, UINT64_MAX));
  /* Long enough for the late timestamps to land before the tool's last flush. */
  usleep(200 * 1000);
}

/* zeInit's flags: the program asks for GPU drivers only, and prints the types it sees. */
static void init_flags(void) {
  uint32_t n = 0;
  ZE(zeDriverGet(&n, NULL));
  ze_driver_handle_t drivers[8];
  n = n > 8 ? 8 : n;
  ZE(zeDriverGet(&n, drivers));
  printf("W DRIVERS %u\n", n);
  for (uint32_t d = 0; d < n; ++d) {
    uint32_t m = 8;
    ze_device_handle_t devices[8];
    ZE(zeDeviceGet(drivers[d], &m, devices));
    for (uint32_t i = 0; i < m; ++i) {
      ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
      ZE(zeDeviceGetProperties(devices[i], &p));
      printf("W DEVICE %u\n", (unsigned)p.type);
    }
  }
}

/* Thousands of commands in flight at each of the program's waits: 10,000 kernels on an
 * in-order immediate list (a marker event on every 500th), the program waiting, every 500
 * appends, for the marker appended 1,000 before (or `ZE_GPU_STREAM` kernels). */
static void deep_stream(void) {
  const char* want = getenv("ZE_GPU_STREAM");
  int n = want ? atoi(want) : 10000;
  ze_command_list_handle_t list = immediate(1);
  ze_kernel_handle_t k = spin_kernel(0);
  int markers = n / 500 + 1;
  ze_event_pool_handle_t p = pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 0, (uint32_t)markers);
  ze_event_handle_t* m = calloc((size_t)markers, sizeof *m);
  for (int i = 0; i < markers; ++i) m[i] = event(p, (uint32_t)i);
  for (int i = 0; i < n; ++i) {
    int marker = i % 500 == 0;
    launch(list, k, marker ? m[i / 500] : NULL, 0, NULL);
    if (marker && i >= 1000) ZE(zeEventHostSynchronize(m[i / 500 - 2], UINT64_MAX));
  }
  expect_kernels(n);
  ZE(((ze_pfnCommandListHostSynchronize_t)extension("zeCommandListHostSynchronize"))(list, UINT64_MAX));
  free(m);
}

/* Work on each device the driver lists (ZE_SIM_TILES, ZE_FLAT_DEVICE_HIERARCHY) and on each
 * sub-device: a kernel and a copy on each. */
static void tiles(void) {
  uint32_t n = 8;
  ze_device_handle_t devices[8];
  ZE(zeDeviceGet(driver, &n, devices));
  ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  void *a = NULL, *b = NULL;
  ZE(zeMemAllocHost(context, &hdesc, 4096, 64, &a));
  ZE(zeMemAllocHost(context, &hdesc, 4096, 64, &b));
  for (uint32_t d = 0; d < n; ++d) {
    ze_device_handle_t all[9];
    uint32_t subs = 8;
    ZE(zeDeviceGetSubDevices(devices[d], &subs, all + 1));
    all[0] = devices[d];
    printf("W DEVICE %u SUBDEVICES %u\n", d, subs);
    for (uint32_t s = 0; s <= subs; ++s) {
      ze_command_list_handle_t list = immediate_on(all[s], 1, 0);
      launch(list, spin_kernel(50), NULL, 0, NULL);
      ze_command_list_handle_t copy = immediate_on(all[s], 1, 1);
      ZE(zeCommandListAppendMemoryCopy(copy, b, a, 4096, NULL, 0, NULL));
      ze_pfnCommandListHostSynchronize_t sync = extension("zeCommandListHostSynchronize");
      ZE(sync(list, UINT64_MAX));
      ZE(sync(copy, UINT64_MAX));
      expect_kernels(1);
      expect_copies(1);
    }
  }
  ZE(zeMemFree(context, a));
  ZE(zeMemFree(context, b));
}

/* Work on an NPU (a device of type VPU, of a second driver): the first such device found gets a
 * kernel. */
static void npu(void) {
  uint32_t n = 0;
  ZE(zeDriverGet(&n, NULL));
  ze_driver_handle_t drivers[8];
  n = n > 8 ? 8 : n;
  ZE(zeDriverGet(&n, drivers));
  for (uint32_t d = 0; d < n; ++d) {
    uint32_t m = 1;
    ze_device_handle_t dev = NULL;
    ZE(zeDeviceGet(drivers[d], &m, &dev));
    ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ZE(zeDeviceGetProperties(dev, &p));
    if (p.type != ZE_DEVICE_TYPE_VPU) continue;
    ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t ctx = NULL;
    ZE(zeContextCreate(drivers[d], &cdesc, &ctx));
    ze_module_desc_t mdesc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, 4,
                              (const uint8_t*)"none", NULL, NULL};
    ze_module_handle_t mod = NULL;
    ZE(zeModuleCreate(ctx, dev, &mdesc, &mod, NULL));
    ze_kernel_desc_t kdesc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "spin"};
    ze_kernel_handle_t k = NULL;
    ZE(zeKernelCreate(mod, &kdesc, &k));
    uint32_t us = 30;
    ZE(zeKernelSetArgumentValue(k, 0, sizeof us, &us));
    ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0,
                                     ZE_COMMAND_QUEUE_FLAG_IN_ORDER,
                                     ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list = NULL;
    ZE(zeCommandListCreateImmediate(ctx, dev, &qdesc, &list));
    launch(list, k, NULL, 0, NULL);
    printf("W NPU_KERNELS 1\n");
    return;
  }
  fprintf(stderr, "ze_gpu: no NPU\n");
  exit(2);
}

/* What both tracers see (Intel's PTI beside libpti): kernels with no event, with the program's
 * timestamp event (whose duration the program reads) and with its counter-based event; copies
 * and fills; a regular list executed twice. */
static void two_tracers(void) {
  ze_command_list_handle_t list = immediate(1);
  ze_event_handle_t timed = event(pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 0, 1), 0);
  ze_event_handle_t cb = zex_event(ZEX_IMMEDIATE | ZEX_NON_IMMEDIATE | ZEX_HOST_VISIBLE | ZEX_KERNEL_TIMESTAMP);
  ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  float *a = NULL, *b = NULL;
  ZE(zeMemAllocHost(context, &hdesc, 4096, 64, (void**)&a));
  ZE(zeMemAllocHost(context, &hdesc, 4096, 64, (void**)&b));
  const float two = 2.0f;
  for (int round = 0; round < 3; ++round) {
    launch(list, spin_kernel(40), NULL, 0, NULL);
    ZE(zeCommandListAppendMemoryFill(list, a, &two, sizeof two, 4096, NULL, 0, NULL));
    ZE(zeCommandListAppendMemoryCopy(list, b, a, 4096, NULL, 0, NULL));
    launch(list, spin_kernel(60), cb, 0, NULL);
    ZE(zeEventHostReset(timed));
    launch(list, spin_kernel(80), timed, 0, NULL);
    ZE(zeEventHostSynchronize(timed, UINT64_MAX));
    char label[32];
    snprintf(label, sizeof label, "two_tracers_%d", round);
    own(label, timed);
  }
  expect_kernels(9);
  expected_fills += 3;
  expect_copies(3);
  ze_command_list_handle_t reg = regular(ZE_COMMAND_LIST_FLAG_IN_ORDER, NULL);
  launch(reg, spin_kernel(50), NULL, 0, NULL);
  ZE(zeCommandListAppendMemoryCopy(reg, a, b, 4096, NULL, 0, NULL));
  ZE(zeCommandListClose(reg));
  ze_command_queue_handle_t q = queue();
  for (int run = 0; run < 2; ++run) {
    ZE(zeCommandQueueExecuteCommandLists(q, 1, &reg, NULL));
    ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
  }
  expect_kernels(2);
  expect_copies(2);
  double sum = 0;
  for (int i = 0; i < 1024; ++i) sum += a[i];
  printf("W RESULT two_tracers %.1f\n", sum);
}

static const struct {
  const char* name;
  void (*run)(void);
} scenarios[] = {
    {"cb_chain", cb_chain},       {"ping_pong", ping_pong},         {"free_list", free_list},
    {"own_timestamps", own_timestamps}, {"graph", graph},           {"regular_ooo", regular_ooo},
    {"pipelined", pipelined},     {"mutable", mutable_list},        {"late_timestamps", late_timestamps},
    {"init_flags", init_flags},   {"deep_stream", deep_stream},     {"tiles", tiles},
    {"npu", npu},                 {"two_tracers", two_tracers},
};

/* === the tool (traced build) === */

#ifdef TRACED
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define OKAY(call)                                                                \
  do {                                                                            \
    pti_result r_ = (call);                                                       \
    if (r_ != PTI_SUCCESS) {                                                      \
      fprintf(stderr, "ze_gpu: %s: %s\n", #call, ptiResultTypeToString(r_));      \
      exit(3);                                                                    \
    }                                                                             \
  } while (0)

static void on_critical(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                        uint32_t api_id, void* cb_data) {
  (void)user_data, (void)group, (void)api_id;
  if (domain != PTI_DOMAIN_PTI_CRITICAL_EVENT) return;
  pti_critical_event_callback_data* c = cb_data;
  pthread_mutex_lock(&lock);
  printf("T CRITICAL %d %s\n", (int)c->_pti_event, c->_message);
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
      case PTI_VIEW_DEVICE_GPU_KERNEL:
      case PTI_VIEW_DEVICE_CPU_KERNEL: {
        pti_view_record_kernel_v2* k = (void*)r;
        printf("T REC KERNEL %s %u %llu %llu %s\n", k->_name, k->_correlation_id,
               (unsigned long long)k->_start_timestamp, (unsigned long long)k->_end_timestamp,
               k->_pci_address);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_COPY: {
        pti_view_record_memory_copy_v2* c = (void*)r;
        printf("T REC COPY - %u %llu %llu %s\n", c->_correlation_id,
               (unsigned long long)c->_start_timestamp, (unsigned long long)c->_end_timestamp,
               c->_pci_address);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_FILL: {
        pti_view_record_memory_fill_v2* f = (void*)r;
        printf("T REC FILL - %u %llu %llu %s\n", f->_correlation_id,
               (unsigned long long)f->_start_timestamp, (unsigned long long)f->_end_timestamp,
               f->_pci_address);
        break;
      }
      default:
        break;
    }
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

static const pti_view_kind views[] = {PTI_VIEW_DEVICE_GPU_KERNEL, PTI_VIEW_DEVICE_CPU_KERNEL,
                                      PTI_VIEW_DEVICE_GPU_MEM_COPY, PTI_VIEW_DEVICE_GPU_MEM_FILL};
#define N_VIEWS (sizeof views / sizeof views[0])

static void tool_start(void) {
  pti_callback_subscriber sub;
  OKAY(ptiCallbackSubscribe(&sub, on_critical, NULL));
  OKAY(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_PTI_CRITICAL_EVENT));
  OKAY(ptiViewSetCallbacks(requested, completed));
  for (size_t i = 0; i < N_VIEWS; ++i) OKAY(ptiViewEnable(views[i]));
}

static void tool_end(void) {
  OKAY(ptiFlushAllViews());
  static const char* names[] = {"KERNEL", "KERNEL", "COPY", "FILL"};
  uint64_t lost[4] = {0};
  for (size_t i = 0; i < N_VIEWS; ++i) {
    uint64_t n = 0;
    OKAY(ptiViewGetDroppedRecordCount(views[i], &n));
    lost[i] = n;
  }
  printf("T LOST %s %llu\n", names[0], (unsigned long long)(lost[0] + lost[1]));
  printf("T LOST %s %llu\n", names[2], (unsigned long long)lost[2]);
  printf("T LOST %s %llu\n", names[3], (unsigned long long)lost[3]);
  /* Kernel launches counted without a record (work on an NPU). */
  uint64_t unrecorded = 0;
  OKAY(ptiViewGetUnrecordedCommandCount(PTI_API_GROUP_LEVELZERO, zeCommandListAppendLaunchKernel_id,
                                        &unrecorded));
  printf("T UNRECORDED KERNEL %llu\n", (unsigned long long)unrecorded);
  fflush(stdout);
}
#endif

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ze_gpu <scenario>\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; ++i) {
    if (strcmp(argv[1], scenarios[i].name) != 0) continue;
#ifdef INTEL_BESIDE
    /* Intel's tracer before libpti's, or after (the loader calls them in that order). */
    int intel_first = getenv("ZE_GPU_INTEL_FIRST") != NULL;
    if (intel_first) intel_beside_start();
#endif
#ifdef TRACED
    tool_start();
#endif
#ifdef INTEL_BESIDE
    if (!intel_first) intel_beside_start();
#endif
    const char* flags = getenv("ZE_GPU_INIT_FLAGS");
    setup(flags ? (ze_init_flags_t)strtoul(flags, NULL, 0) : 0);
    scenarios[i].run();
    finish();
#ifdef TRACED
    tool_end();
#endif
#ifdef INTEL_BESIDE
    intel_beside_finish();
#endif
    return 0;
  }
  fprintf(stderr, "ze_gpu: no scenario %s\n", argv[1]);
  return 2;
}
