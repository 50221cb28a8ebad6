/* A real Level Zero program for the tracer's tests, run over the simulated driver (ze-sim):
 * kernels, copies and fills on an immediate list (thread 0) and on a regular list executed three
 * times through a queue with a fence (thread 1), events from a pool with kernel timestamps and
 * from one without, barriers, and every host wait (event, fence, queue). Halfway through, it
 * waits for the device's kernel timestamps to wrap around if they are about to (the simulated
 * driver's do, half a second after it starts).
 *
 * It knows nothing of libpti (but for ZE_TEST_PAUSE_WHILE_BUILDING, which looks its pause up by
 * name). It prints what it computed ("W RESULT"), the duration of its own
 * timed kernel as its event reports it ("W OWNTIME"), and what it submitted ("W EXPECT ..."),
 * which the records must match. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "ze_workload.h"

#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
#define EXECUTIONS 3

static ze_context_handle_t context;
static ze_device_handle_t device;
static ze_module_handle_t module;
static ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t halfway;

static void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&out_lock);
  /* One line as one unit of stdout: a tool printing from a callback on another thread (with its
   * own lock) must not land inside it. */
  flockfile(stdout);
  fputs("W ", stdout);
  vprintf(fmt, ap);
  fputc('\n', stdout);
  fflush(stdout);
  funlockfile(stdout);
  pthread_mutex_unlock(&out_lock);
  va_end(ap);
}

#define ZE(call)                                                         \
  do {                                                                   \
    ze_result_t r_ = (call);                                             \
    if (r_ != ZE_RESULT_SUCCESS) {                                       \
      fprintf(stderr, "ze_workload: %s failed: 0x%x\n", #call, (unsigned)r_); \
      exit(2);                                                           \
    }                                                                    \
  } while (0)

static double checksum(const float* v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += v[i] * (double)((i % 5) + 1);
  return s;
}

static ze_kernel_handle_t kernel(const char* name) {
  ze_kernel_desc_t desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
  ze_kernel_handle_t k = NULL;
  ZE(zeKernelCreate(module, &desc, &k));
  return k;
}

static ze_event_pool_handle_t pool(ze_event_pool_flags_t flags) {
  ze_event_pool_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, flags, 8};
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

static void* alloc_host(size_t bytes) {
  ze_host_mem_alloc_desc_t desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  void* p = NULL;
  ZE(zeMemAllocHost(context, &desc, bytes, 64, &p));
  return p;
}

static void* alloc_device(size_t bytes) {
  ze_device_mem_alloc_desc_t desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
  void* p = NULL;
  ZE(zeMemAllocDevice(context, &desc, bytes, 64, device, &p));
  return p;
}

static void* alloc_shared(size_t bytes) {
  ze_device_mem_alloc_desc_t ddesc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
  ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  void* p = NULL;
  ZE(zeMemAllocShared(context, &ddesc, &hdesc, bytes, 64, device, &p));
  return p;
}

static void launch_vadd(ze_command_list_handle_t list, ze_kernel_handle_t k, void* a, void* b, void* c,
                        ze_event_handle_t signal) {
  ZE(zeKernelSetArgumentValue(k, 0, sizeof a, &a));
  ZE(zeKernelSetArgumentValue(k, 1, sizeof b, &b));
  ZE(zeKernelSetArgumentValue(k, 2, sizeof c, &c));
  ZE(zeKernelSetGroupSize(k, 64, 1, 1));
  ze_group_count_t groups = {N / 64, 1, 1};
  ZE(zeCommandListAppendLaunchKernel(list, k, &groups, signal, 0, NULL));
}

static void launch_spin(ze_command_list_handle_t list, ze_kernel_handle_t k, uint32_t microseconds,
                        ze_event_handle_t signal) {
  ZE(zeKernelSetArgumentValue(k, 0, sizeof microseconds, &microseconds));
  ze_group_count_t one = {1, 1, 1};
  ZE(zeCommandListAppendLaunchKernel(list, k, &one, signal, 0, NULL));
}

/* If the device's kernel timestamps (of fewer valid bits than its global timer) wrap around
 * within two seconds, waits until they have: commands before and after then straddle the wrap,
 * which a profiler must handle. */
static void wait_for_kernel_timestamp_wrap(void) {
  uint64_t host = 0, ticks = 0;
  ZE(zeDeviceGetGlobalTimestamps(device, &host, &ticks));
  if (props.kernelTimestampValidBits >= 64) return;
  uint64_t period = 1ull << props.kernelTimestampValidBits;
  uint64_t left_ns = (period - (ticks & (period - 1))) * 1000000000ull / props.timerResolution;
  if (left_ns > 2000000000ull) return;
  left_ns += 1000000; /* and a millisecond */
  struct timespec pause = {(time_t)(left_ns / 1000000000ull), (long)(left_ns % 1000000000ull)};
  nanosleep(&pause, NULL);
}

/* Both threads meet halfway through their work; thread 0 waits for the wrap meanwhile. */
static void meet_halfway(int waiter) {
  pthread_barrier_wait(&halfway);
  if (waiter) wait_for_kernel_timestamp_wrap();
  pthread_barrier_wait(&halfway);
}

/* Thread 0: an asynchronous immediate list (engine 0.1), and a synchronous one (engine 0.2). */
static void immediate(void) {
  ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 1, 0,
                                   ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t list = NULL, sync_list = NULL;
  ZE(zeCommandListCreateImmediate(context, device, &qdesc, &list));
  qdesc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  qdesc.index = 2;
  ZE(zeCommandListCreateImmediate(context, device, &qdesc, &sync_list));
  ze_kernel_handle_t vadd = kernel("vadd"), spin = kernel("spin");
  ze_event_pool_handle_t timed_pool = pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
  ze_event_pool_handle_t plain_pool = pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  /* Timestamps the host cannot read: only the device waits for this pool's events. */
  ze_event_pool_handle_t device_pool = pool(ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
  ze_event_handle_t timed = event(timed_pool, 0), plain = event(plain_pool, 0);
  ze_event_handle_t device_only = event(device_pool, 0);
  const size_t bytes = N * sizeof(float);
  float *a = alloc_host(bytes), *b = alloc_host(bytes), *out = malloc(bytes);
  float *c = alloc_device(bytes), *d = alloc_device(bytes), *s = alloc_shared(bytes);
  for (int i = 0; i < N; ++i) a[i] = (float)i, b[i] = (float)(i % 7);
  const float zero = 0;
  /* The list is not in order (the device may run its commands in any order between barriers):
   * the copy into d waits for the fill of d, the kernel for both copies. */
  ZE(zeCommandListAppendMemoryFill(list, d, &zero, sizeof zero, bytes, NULL, 0, NULL));
  say("EXPECT FILL zeCommandListAppendMemoryFill(D) %zu", bytes);
  ZE(zeCommandListAppendMemoryCopy(list, c, a, bytes, device_only, 0, NULL));
  say("EXPECT COPY zeCommandListAppendMemoryCopy(H2D) %zu", bytes);
  ZE(zeCommandListAppendBarrier(list, NULL, 0, NULL));
  say("EXPECT SYNC zeCommandListAppendBarrier");
  ZE(zeCommandListAppendMemoryCopy(list, d, b, bytes, NULL, 1, &device_only));
  say("EXPECT COPY zeCommandListAppendMemoryCopy(H2D) %zu", bytes);
  ZE(zeCommandListAppendBarrier(list, NULL, 0, NULL));
  say("EXPECT SYNC zeCommandListAppendBarrier");
  launch_vadd(list, vadd, c, d, s, timed);
  say("EXPECT KERNEL vadd");
  meet_halfway(1);
  launch_spin(list, spin, 200, plain);
  say("EXPECT KERNEL spin");
  ZE(zeEventHostSynchronize(plain, UINT64_MAX)); /* the program's own event still signals */
  say("EXPECT SYNC zeEventHostSynchronize");
  ZE(zeCommandListAppendBarrier(list, NULL, 0, NULL));
  say("EXPECT SYNC zeCommandListAppendBarrier");
  /* The device runs the copy after this call returns: the program waits for it (its event,
   * reset for this second use) before it reads the result or overwrites the source. */
  ZE(zeEventHostReset(plain));
  ZE(zeCommandListAppendMemoryCopy(list, out, s, bytes, plain, 0, NULL));
  say("EXPECT COPY zeCommandListAppendMemoryCopy(S2M) %zu", bytes);
  ZE(zeEventHostSynchronize(plain, UINT64_MAX));
  say("EXPECT SYNC zeEventHostSynchronize");
  ZE(zeCommandListAppendMemoryFill(sync_list, s, &zero, sizeof zero, bytes, NULL, 0, NULL));
  say("EXPECT FILL zeCommandListAppendMemoryFill(S) %zu", bytes);
  ZE(zeEventHostSynchronize(timed, UINT64_MAX));
  say("EXPECT SYNC zeEventHostSynchronize");
  ze_kernel_timestamp_result_t ts;
  ZE(zeEventQueryKernelTimestamp(timed, &ts));
  uint64_t mask = props.kernelTimestampValidBits >= 64 ? ~0ull : (1ull << props.kernelTimestampValidBits) - 1;
  uint64_t ticks = (ts.global.kernelEnd - ts.global.kernelStart) & mask;
  say("OWNTIME %llu", (unsigned long long)(ticks * 1000000000ull / props.timerResolution));
  say("RESULT immediate %.1f", checksum(out, N));
  ZE(zeEventDestroy(timed));
  ZE(zeEventDestroy(plain));
  ZE(zeEventDestroy(device_only));
  ZE(zeEventPoolDestroy(timed_pool));
  ZE(zeEventPoolDestroy(plain_pool));
  ZE(zeEventPoolDestroy(device_pool));
  ZE(zeKernelDestroy(vadd));
  ZE(zeKernelDestroy(spin));
  ZE(zeCommandListDestroy(list));
  ZE(zeCommandListDestroy(sync_list));
  ZE(zeMemFree(context, a));
  ZE(zeMemFree(context, b));
  ZE(zeMemFree(context, c));
  ZE(zeMemFree(context, d));
  ZE(zeMemFree(context, s));
  free(out);
}

/* ZE_TEST_PAUSE_WHILE_BUILDING=1: only the regular list runs, built while libpti's collection is
 * paused (ptiViewPause, found in the process if libpti is there) and executed after the resume. */
static int pause_while_building(void) {
  const char* v = getenv("ZE_TEST_PAUSE_WHILE_BUILDING");
  return v && strcmp(v, "1") == 0;
}

static void call_libpti(const char* name) {
  int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, name);
  if (f) f();
}

/* Thread 1: a regular list, executed three times on a queue (engine 0.3). */
static void regular(void) {
  ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 3, 0,
                                   ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_queue_handle_t queue = NULL;
  ZE(zeCommandQueueCreate(context, device, &qdesc, &queue));
  ze_command_list_desc_t ldesc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
  ze_command_list_handle_t list = NULL;
  ZE(zeCommandListCreate(context, device, &ldesc, &list));
  ze_fence_desc_t fdesc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
  ze_fence_handle_t fence = NULL;
  ZE(zeFenceCreate(queue, &fdesc, &fence));
  ze_kernel_handle_t vadd = kernel("vadd"), spin = kernel("spin");
  const size_t bytes = N * sizeof(float);
  float *a = alloc_host(bytes), *b = alloc_host(bytes), *out = alloc_host(bytes);
  float *c = alloc_device(bytes), *d = alloc_device(bytes), *e = alloc_device(bytes);
  for (int i = 0; i < N; ++i) a[i] = (float)(2 * i), b[i] = 1.5f;
  const float one = 1;
  if (pause_while_building()) call_libpti("ptiViewPause");
  ZE(zeCommandListAppendMemoryFill(list, e, &one, sizeof one, bytes, NULL, 0, NULL));
  ZE(zeCommandListAppendMemoryCopy(list, c, a, bytes, NULL, 0, NULL));
  ZE(zeCommandListAppendMemoryCopy(list, d, b, bytes, NULL, 0, NULL));
  /* Not in order: the kernel runs after the transfers it reads and overwrites. */
  ZE(zeCommandListAppendBarrier(list, NULL, 0, NULL));
  launch_vadd(list, vadd, c, d, e, NULL);
  launch_spin(list, spin, 100, NULL);
  ZE(zeCommandListAppendBarrier(list, NULL, 0, NULL));
  ZE(zeCommandListAppendMemoryCopy(list, out, e, bytes, NULL, 0, NULL));
  ZE(zeCommandListClose(list));
  if (pause_while_building()) call_libpti("ptiViewResume");
  for (int x = 0; x < EXECUTIONS; ++x) {
    if (x == 1 && !pause_while_building()) meet_halfway(0);
    ZE(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    ZE(zeFenceHostSynchronize(fence, UINT64_MAX));
    say("EXPECT SYNC zeFenceHostSynchronize");
    ZE(zeFenceReset(fence));
    say("EXPECT FILL zeCommandListAppendMemoryFill(D) %zu", bytes);
    say("EXPECT COPY zeCommandListAppendMemoryCopy(H2D) %zu", bytes);
    say("EXPECT COPY zeCommandListAppendMemoryCopy(H2D) %zu", bytes);
    say("EXPECT SYNC zeCommandListAppendBarrier");
    say("EXPECT KERNEL vadd");
    say("EXPECT KERNEL spin");
    say("EXPECT SYNC zeCommandListAppendBarrier");
    say("EXPECT COPY zeCommandListAppendMemoryCopy(D2H) %zu", bytes);
  }
  ZE(zeCommandQueueSynchronize(queue, UINT64_MAX));
  say("EXPECT SYNC zeCommandQueueSynchronize");
  say("RESULT regular %.1f", checksum(out, N));
  ZE(zeFenceDestroy(fence));
  ZE(zeKernelDestroy(vadd));
  ZE(zeKernelDestroy(spin));
  ZE(zeCommandListDestroy(list));
  ZE(zeCommandQueueDestroy(queue));
  ZE(zeMemFree(context, a));
  ZE(zeMemFree(context, b));
  ZE(zeMemFree(context, out));
  ZE(zeMemFree(context, c));
  ZE(zeMemFree(context, d));
  ZE(zeMemFree(context, e));
}

static void* worker(void* arg) {
  if (arg) regular();
  else if (!pause_while_building()) immediate();
  return NULL;
}

int ze_workload(void) {
  ZE(zeInit(0));
  uint32_t n = 1;
  ze_driver_handle_t driver = NULL;
  ZE(zeDriverGet(&n, &driver));
  n = 1;
  ZE(zeDeviceGet(driver, &n, &device));
  ZE(zeDeviceGetProperties(device, &props));
  say("DEVICE %s", props.name);
  ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
  ZE(zeContextCreate(driver, &cdesc, &context));
  static const uint8_t binary[] = "ze-sim kernels";
  ze_module_desc_t mdesc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, sizeof binary,
                            binary, NULL, NULL};
  ZE(zeModuleCreate(context, device, &mdesc, &module, NULL));
  pthread_barrier_init(&halfway, NULL, 2);
  pthread_t threads[2];
  for (size_t t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, worker, (void*)t);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&halfway);
  ZE(zeModuleDestroy(module));
  ZE(zeContextDestroy(context));
  return 0;
}
