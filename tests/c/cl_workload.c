/* A real OpenCL program for the layer's tests: vector add, copies, fills, images, maps, USM
 * where the device has it, barriers and markers, on several queues from two threads.
 *
 * It knows nothing of libpti. It prints what it computed and what it saw of its own objects
 * ("W RESULT", "W EVENTS", "W QUEUEPROPS", ...), which must be the same with and without libpti,
 * and what it submitted ("W EXPECT ...", "W LAUNCHES"), which the records must match. Lines
 * with timings of its own profiled queue ("W OWNTIME") differ from run to run.
 *
 * PTI_TEST_PLATFORM picks the first platform whose name contains it (default: the first). */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* the workload calls the 1.x queue and task entry points too */
#include "cl_workload.h"

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (1 << 16)
#define LAUNCHES_PER_THREAD 3
#define RECT_W 64 /* floats per row of the rect read */
#define RECT_H 16
#define IMAGE_SIDE 32
#define OWN_TIMED 3

static cl_context context;
static cl_device_id device;
static cl_platform_id platform;
static cl_program program;
static int image_support, usm_support;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char* what, cl_int err) {
  fprintf(stderr, "cl_workload: %s failed: %d\n", what, err);
  exit(2);
}

#define CL(call)                     \
  do {                               \
    cl_int e_ = (call);              \
    if (e_ != CL_SUCCESS) die(#call, e_); \
  } while (0)

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

static const char* SOURCE =
    "__kernel void vadd(__global const float* a, __global const float* b, __global float* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void scale(__global float* c, float k, uint n) {\n"
    "  for (uint i = 0; i < n; ++i) c[i] *= k;\n"
    "}\n";

/* Events the program asked for: it releases them at the end, after reporting their counts. */
#define MAX_OWN 64
static cl_event own[MAX_OWN];
static int n_own;

static void keep(cl_event e) {
  pthread_mutex_lock(&out_lock);
  if (n_own < MAX_OWN) own[n_own++] = e;
  pthread_mutex_unlock(&out_lock);
}

static double checksum(const float* v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += v[i] * (double)((i % 7) + 1);
  return s;
}

static void pick_device(void) {
  cl_platform_id platforms[16];
  cl_uint n = 0;
  CL(clGetPlatformIDs(16, platforms, &n));
  const char* want = getenv("PTI_TEST_PLATFORM");
  for (cl_uint i = 0; i < n; ++i) {
    char name[256] = {0};
    CL(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL));
    if (want && !strstr(name, want)) continue;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) continue;
    platform = platforms[i];
    char dev_name[256] = {0};
    CL(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof dev_name - 1, dev_name, NULL));
    say("PLATFORM %s", name);
    say("DEVICE %s", dev_name);
    return;
  }
  fprintf(stderr, "cl_workload: no OpenCL platform%s%s with a device\n", want ? " matching " : "",
          want ? want : "");
  exit(3);
}

/* One thread's pipeline on its own queue. */
static void* pipeline(void* arg) {
  int t = (int)(size_t)arg;
  cl_int err;
  cl_command_queue q = t == 0 ? clCreateCommandQueueWithProperties(context, device, NULL, &err)
                              : clCreateCommandQueue(context, device, 0, &err);
  if (!q) die("create queue", err);
  cl_command_queue_properties props = 0;
  CL(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
  say("QUEUEPROPS %d %llu", t, (unsigned long long)props);
  {
    /* Both kinds of queue: created with a (NULL) list, and with the 1.x properties. */
    size_t array_size = 99;
    cl_queue_properties array[8] = {0};
    cl_int st = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof array, array, &array_size);
    unsigned long long props_in_array = 0;
    for (size_t i = 0; st == CL_SUCCESS && i + 1 < array_size / sizeof array[0]; i += 2)
      if (array[i] == CL_QUEUE_PROPERTIES) props_in_array = array[i + 1];
    say("QUEUEPROPSARRAY %d %d %zu %llu", t, st, st == CL_SUCCESS ? array_size : 0, props_in_array);
  }

  const size_t bytes = N * sizeof(float);
  float* ha = malloc(bytes);
  float* hb = malloc(bytes);
  float* out = malloc(bytes);
  float* rect = malloc(RECT_W * RECT_H * sizeof(float));
  for (int i = 0; i < N; ++i) {
    ha[i] = (float)i * 0.5f + (float)t;
    hb[i] = (float)(2 * i % 1000);
  }
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_ONLY, bytes, NULL, &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_ONLY, bytes, NULL, &err);
  cl_mem c = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  cl_mem d = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (!a || !b || !c || !d) die("clCreateBuffer", err);
  cl_kernel vadd = clCreateKernel(program, "vadd", &err);
  cl_kernel scale = clCreateKernel(program, "scale", &err);
  if (!vadd || !scale) die("clCreateKernel", err);

  cl_event written;
  CL(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, bytes, ha, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueWriteBuffer(M2D) %zu", bytes);
  CL(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, bytes, hb, 0, NULL, &written));
  keep(written);

  say("EXPECT COPY clEnqueueWriteBuffer(M2D) %zu", bytes);
  const float zero = 0.0f;
  CL(clEnqueueFillBuffer(q, c, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));
  say("EXPECT FILL clEnqueueFillBuffer(D) %zu", bytes);

  CL(clSetKernelArg(vadd, 0, sizeof a, &a));
  CL(clSetKernelArg(vadd, 1, sizeof b, &b));
  CL(clSetKernelArg(vadd, 2, sizeof c, &c));
  size_t global = N;
  for (int k = 0; k < LAUNCHES_PER_THREAD; ++k) {
    cl_event launched;
    CL(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, NULL, k == 0 ? 1 : 0,
                              k == 0 ? &written : NULL, k == 0 ? &launched : NULL));
    if (k == 0) keep(launched);
    say("EXPECT KERNEL vadd");
  }
  float two = 2.0f;
  cl_uint n = N;
  CL(clSetKernelArg(scale, 0, sizeof c, &c));
  CL(clSetKernelArg(scale, 1, sizeof two, &two));
  CL(clSetKernelArg(scale, 2, sizeof n, &n));
  CL(clEnqueueTask(q, scale, 0, NULL, NULL));
  say("EXPECT KERNEL scale");

  CL(clEnqueueCopyBuffer(q, c, d, 0, 0, bytes, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueCopyBuffer(D2D) %zu", bytes);
  CL(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
  say("EXPECT SYNC clEnqueueBarrierWithWaitList");
  size_t origin[3] = {0, 0, 0}, region[3] = {RECT_W * sizeof(float), RECT_H, 1};
  CL(clEnqueueReadBufferRect(q, d, CL_FALSE, origin, origin, region, RECT_W * 2 * sizeof(float), 0,
                             RECT_W * sizeof(float), 0, rect, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueReadBufferRect(D2M) %zu", RECT_W * RECT_H * sizeof(float));
  cl_event marker;
  CL(clEnqueueMarkerWithWaitList(q, 0, NULL, &marker));
  keep(marker);
  say("EXPECT SYNC clEnqueueMarkerWithWaitList");
  CL(clWaitForEvents(1, &marker));
  say("EXPECT SYNC clWaitForEvents");

  float* mapped = clEnqueueMapBuffer(q, d, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
  if (!mapped) die("clEnqueueMapBuffer", err);
  say("EXPECT COPY clEnqueueMapBuffer(D2M) %zu", bytes);
  double mapped_sum = checksum(mapped, N);
  CL(clEnqueueUnmapMemObject(q, d, mapped, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueUnmapMemObject(M2D) %zu", bytes);
  CL(clEnqueueReadBuffer(q, d, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueReadBuffer(D2M) %zu", bytes);
  CL(clFinish(q));
  say("EXPECT SYNC clFinish");
  say("RESULT thread %d sum %.1f mapped %.1f rect %.1f", t, checksum(out, N), mapped_sum,
      checksum(rect, RECT_W * RECT_H));

  if (t == 0) {
    /* The program's own event on a queue it did not ask to profile. */
    cl_ulong ns = 0;
    say("PROFQUERY %d", clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_START, sizeof ns, &ns, NULL));
  }

  CL(clReleaseKernel(vadd));
  CL(clReleaseKernel(scale));
  CL(clReleaseMemObject(a));
  CL(clReleaseMemObject(b));
  CL(clReleaseMemObject(c));
  CL(clReleaseMemObject(d));
  CL(clReleaseCommandQueue(q));
  if (t == 0) {
    /* Still the program's answer once the queue is gone. */
    cl_ulong ns = 0;
    say("PROFQUERYAFTERRELEASE %d", clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_END, sizeof ns, &ns, NULL));
  }
  free(ha);
  free(hb);
  free(out);
  free(rect);
  return NULL;
}

/* The reference count of an event whose command completed, before any wait (no other thread
 * runs, so nothing waits): what the program holds plus what the runtime itself keeps, read until
 * it settles, and the same with libpti as without. */
static void early_refcount(void) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
  if (!q || !m) die("early_refcount setup", err);
  char data[4096] = {0};
  cl_event written;
  CL(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, sizeof data, data, 0, NULL, &written));
  say("EXPECT COPY clEnqueueWriteBuffer(M2D) %zu", sizeof data);
  CL(clFlush(q));
  cl_int status = CL_QUEUED;
  while (status > CL_COMPLETE)
    CL(clGetEventInfo(written, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
  cl_uint refs = 0, last = 0;
  for (int tries = 0; tries < 40; ++tries) {
    CL(clGetEventInfo(written, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    if (refs == 1 || (tries > 0 && refs == last)) break;
    last = refs;
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  say("REFBEFOREWAIT %u", refs);
  CL(clFinish(q));
  say("EXPECT SYNC clFinish");
  CL(clReleaseEvent(written));
  CL(clReleaseMemObject(m));
  CL(clReleaseCommandQueue(q));
}

/* The program lets its event go before its command's record can have been written (no wait
 * yet): libpti must keep the event alive until it has read the command's times (Intel's CPU
 * runtime crashes on a read of the freed event; PoCL recycles its events and does not show it). */
static void early_release(void) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
  static float zeros[N];
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zeros, zeros,
                            &err);
  cl_kernel vadd = clCreateKernel(program, "vadd", &err);
  if (!q || !a || !vadd) die("early_release setup", err);
  for (cl_uint i = 0; i < 3; ++i) CL(clSetKernelArg(vadd, i, sizeof a, &a));
  size_t global = N;
  cl_event launched;
  CL(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, NULL, 0, NULL, &launched));
  say("EXPECT KERNEL vadd");
  CL(clReleaseEvent(launched));
  CL(clFinish(q));
  say("EXPECT SYNC clFinish");
  CL(clReleaseKernel(vadd));
  CL(clReleaseMemObject(a));
  CL(clReleaseCommandQueue(q));
}

/* A queue the program profiles itself: its own kernel timings, to compare with the records. The
 * test finds its records by the queue's handle, so it is created before any other queue: a queue
 * released earlier could otherwise have had the same address (Intel's CPU runtime reuses them),
 * and its kernels would count as this queue's. */
static cl_command_queue own_queue;

static void create_own_queue(void) {
  cl_int err;
  own_queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
  if (!own_queue) die("create profiled queue", err);
}

static void own_timings(void) {
  cl_int err;
  cl_command_queue q = own_queue;
  say("OWNQUEUE %p", (void*)q);
  const size_t bytes = N * sizeof(float);
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  cl_kernel vadd = clCreateKernel(program, "vadd", &err);
  float one = 1.0f;
  CL(clEnqueueFillBuffer(q, a, &one, sizeof one, 0, bytes, 0, NULL, NULL));
  say("EXPECT FILL clEnqueueFillBuffer(D) %zu", bytes);
  CL(clSetKernelArg(vadd, 0, sizeof a, &a));
  CL(clSetKernelArg(vadd, 1, sizeof a, &a));
  CL(clSetKernelArg(vadd, 2, sizeof a, &a));
  size_t global = N;
  cl_event timed[OWN_TIMED];
  for (int i = 0; i < OWN_TIMED; ++i) {
    CL(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, NULL, 0, NULL, &timed[i]));
    say("EXPECT KERNEL vadd");
  }
  CL(clFinish(q));
  say("EXPECT SYNC clFinish");
  for (int i = 0; i < OWN_TIMED; ++i) {
    cl_ulong start = 0, end = 0;
    CL(clGetEventProfilingInfo(timed[i], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    CL(clGetEventProfilingInfo(timed[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    say("OWNTIME %d %llu", i, (unsigned long long)(end - start));
    keep(timed[i]);
  }
  CL(clReleaseKernel(vadd));
  CL(clReleaseMemObject(a));
  CL(clReleaseCommandQueue(q));
}

static void images(void) {
  if (!image_support) return;
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
  cl_image_format format = {CL_RGBA, CL_FLOAT};
  cl_image_desc desc = {0};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = IMAGE_SIDE;
  desc.image_height = IMAGE_SIDE;
  cl_mem image = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
  if (!image) die("clCreateImage", err);
  const size_t pixels = IMAGE_SIDE * IMAGE_SIDE, bytes = pixels * 4 * sizeof(float);
  float* in = malloc(bytes);
  float* back = malloc(bytes);
  for (size_t i = 0; i < pixels * 4; ++i) in[i] = (float)(i % 97);
  size_t origin[3] = {0, 0, 0}, region[3] = {IMAGE_SIDE, IMAGE_SIDE, 1};
  CL(clEnqueueWriteImage(q, image, CL_TRUE, origin, region, 0, 0, in, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueWriteImage(M2D) %zu", bytes);
  size_t half[3] = {IMAGE_SIDE / 2, IMAGE_SIDE, 1};
  float color[4] = {1, 2, 3, 4};
  CL(clEnqueueFillImage(q, image, color, origin, half, 0, NULL, NULL));
  say("EXPECT FILL clEnqueueFillImage(D) %zu", bytes / 2);
  CL(clEnqueueReadImage(q, image, CL_TRUE, origin, region, 0, 0, back, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueReadImage(D2M) %zu", bytes);
  say("RESULT image %.1f", checksum(back, pixels * 4));
  CL(clReleaseMemObject(image));
  CL(clReleaseCommandQueue(q));
  free(in);
  free(back);
}

typedef void* (*host_alloc_fn)(cl_context, const cl_mem_properties_intel*, size_t, cl_uint, cl_int*);
typedef void* (*device_alloc_fn)(cl_context, cl_device_id, const cl_mem_properties_intel*, size_t,
                                 cl_uint, cl_int*);
typedef cl_int (*memcpy_fn)(cl_command_queue, cl_bool, void*, const void*, size_t, cl_uint,
                            const cl_event*, cl_event*);
typedef cl_int (*memfill_fn)(cl_command_queue, void*, const void*, size_t, size_t, cl_uint,
                             const cl_event*, cl_event*);
typedef cl_int (*blocking_free_fn)(cl_context, void*);

static void usm(void) {
  if (!usm_support) return;
  host_alloc_fn host_alloc =
      (host_alloc_fn)clGetExtensionFunctionAddressForPlatform(platform, "clHostMemAllocINTEL");
  device_alloc_fn device_alloc =
      (device_alloc_fn)clGetExtensionFunctionAddressForPlatform(platform, "clDeviceMemAllocINTEL");
  memcpy_fn copy = (memcpy_fn)clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueMemcpyINTEL");
  memfill_fn fill = (memfill_fn)clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueMemFillINTEL");
  blocking_free_fn blocking_free =
      (blocking_free_fn)clGetExtensionFunctionAddressForPlatform(platform, "clMemBlockingFreeINTEL");
  if (!host_alloc || !device_alloc || !copy || !fill || !blocking_free) die("USM function addresses", 0);
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
  const size_t bytes = N * sizeof(float);
  float* host = host_alloc(context, NULL, bytes, 0, &err);
  float* dev = device_alloc(context, device, NULL, bytes, 0, &err);
  float* plain = malloc(bytes);
  if (!host || !dev) die("USM allocation", err);
  for (int i = 0; i < N; ++i) host[i] = (float)(i % 13);
  CL(copy(q, CL_TRUE, dev, host, bytes, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueMemcpyINTEL(H2D) %zu", bytes);
  const float three = 3.0f;
  CL(fill(q, dev, &three, sizeof three, bytes / 2, 0, NULL, NULL));
  say("EXPECT FILL clEnqueueMemFillINTEL(D) %zu", bytes / 2);
  CL(copy(q, CL_FALSE, plain, dev, bytes, 0, NULL, NULL));
  say("EXPECT COPY clEnqueueMemcpyINTEL(D2M) %zu", bytes);
  CL(clFinish(q));
  say("EXPECT SYNC clFinish");
  say("RESULT usm %.1f", checksum(plain, N));
  CL(blocking_free(context, host));
  CL(blocking_free(context, dev));
  CL(clReleaseCommandQueue(q));
  free(plain);
}

int cl_workload(void) {
  pick_device();
  cl_int err;
  context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  if (!context) die("clCreateContext", err);
  program = clCreateProgramWithSource(context, 1, &SOURCE, NULL, &err);
  if (!program) die("clCreateProgramWithSource", err);
  CL(clBuildProgram(program, 1, &device, NULL, NULL, NULL));
  cl_bool images_ok = CL_FALSE;
  CL(clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images_ok, &images_ok, NULL));
  image_support = images_ok == CL_TRUE;
  char extensions[8192] = {0};
  CL(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof extensions - 1, extensions, NULL));
  usm_support = strstr(extensions, "cl_intel_unified_shared_memory") != NULL;
  say("FEATURES images %d usm %d", image_support, usm_support);

  create_own_queue();
  early_release();
  early_refcount();
  pthread_t threads[2];
  for (size_t t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, pipeline, (void*)t);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  own_timings();
  images();
  usm();

  /* The program's own events: their reference counts must be the program's alone. A runtime
   * may hold references of its own for a moment after completion (PoCL's notifier does), so the
   * count is read until it settles; a reference someone keeps never goes away. */
  cl_uint refs = 0;
  for (int tries = 0; tries < 200; ++tries) {
    refs = 0;
    for (int i = 0; i < n_own; ++i) {
      cl_uint r = 0;
      CL(clGetEventInfo(own[i], CL_EVENT_REFERENCE_COUNT, sizeof r, &r, NULL));
      refs += r;
    }
    if (refs == (cl_uint)n_own) break;
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  say("EVENTS %d refs %u", n_own, refs);
  for (int i = 0; i < n_own; ++i) CL(clReleaseEvent(own[i]));
  CL(clReleaseProgram(program));
  CL(clReleaseContext(context));
  return 0;
}
