/* The program side of the overhead benchmark (issue #8): an ordinary OpenCL program that knows
 * nothing of libpti. benches/overhead.py runs it untraced and with libpti (and
 * benches/bench_tool.c) preloaded, interleaving the modes, and compares the times it prints.
 *
 * usage: cl_loop launch|copy <timed iterations> [warm-up iterations]
 *   launch  a one-work-item kernel enqueued again and again, no events passed, a clFinish every
 *           1024 launches (as a program that uses its results waits for them; without it, PoCL
 *           keeps every command in flight and the program's memory grows with the loop) and at
 *           the end (launch-bound);
 *   copy    blocking 1 MiB host-to-device writes (copy-bound).
 * With CL_LOOP_TIMED=1 the launch loop times every launch itself, as a program that wants each
 * kernel's device time and nothing else would (the floor that libpti's device views are measured
 * against): a profiling queue, an event per launch, and after each clFinish every event's START
 * and END read and the event released. CL_LOOP_SYNC=<n> waits every n launches instead of 1024
 * (the callgrind instrument waits every 64, so that no poll finds a command still running).
 * Prints "RESULT <ns per iteration> maxrss_kib <peak resident set>" on stdout. The platform is
 * the first whose name contains $PTI_TEST_PLATFORM (any, if unset); its first GPU, else its
 * first device.
 *
 * build: cc -std=c11 -O2 benches/cl_loop.c -o cl_loop -lOpenCL */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define COPY_BYTES (1u << 20)
#define MAX_SYNC 4096

static int sync_every = 1024, timed;
static cl_event events[MAX_SYNC];
/* Sum of the device times read in the timed loop (printed, so the reads are not optimised out). */
static cl_ulong device_ns;

#define CHECK(call)                                                          \
  do {                                                                       \
    cl_int e_ = (call);                                                      \
    if (e_ != CL_SUCCESS) {                                                  \
      fprintf(stderr, "cl_loop: %s failed: %d\n", #call, e_);                \
      exit(2);                                                               \
    }                                                                        \
  } while (0)

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static cl_device_id pick_device(void) {
  const char* want = getenv("PTI_TEST_PLATFORM");
  cl_platform_id platforms[16];
  cl_uint n = 0;
  CHECK(clGetPlatformIDs(16, platforms, &n));
  if (n > 16) n = 16;
  for (cl_uint i = 0; i < n; i++) {
    char name[256] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
    if (want && !strstr(name, want)) continue;
    cl_device_id device;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &device, NULL) == CL_SUCCESS ||
        clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) == CL_SUCCESS)
      return device;
  }
  fprintf(stderr, "cl_loop: no OpenCL platform matches PTI_TEST_PLATFORM=%s\n", want ? want : "(unset)");
  exit(3);
}

/* Waits for the queue; in the timed loop, reads and releases the `pending` launches' events. */
static void finish(cl_command_queue q, int pending) {
  CHECK(clFinish(q));
  for (int i = 0; i < pending; i++) {
    cl_ulong start, end;
    CHECK(clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    CHECK(clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    device_ns += end - start;
    CHECK(clReleaseEvent(events[i]));
  }
}

/* The loop body, `n` times; returns when the device has finished. */
__attribute__((noinline)) static void run(int launch, int n, cl_command_queue q, cl_kernel k, cl_mem buf,
                                          const void* host) {
  size_t global = 1;
  int pending = 0;
  for (int i = 0; i < n; i++) {
    if (launch) {
      CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, timed ? &events[pending] : NULL));
      pending += timed;
      if (i % sync_every == sync_every - 1) {
        finish(q, pending);
        pending = 0;
      }
    } else
      CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, COPY_BYTES, host, 0, NULL, NULL));
  }
  finish(q, pending);
}

/* The timed loop: benches/callgrind.sh counts instructions only inside this function. */
__attribute__((noinline)) static void timed_loop(int launch, int n, cl_command_queue q, cl_kernel k, cl_mem buf,
                                                 const void* host) {
  run(launch, n, q, k, buf, host);
}

int main(int argc, char** argv) {
  if (argc < 3 || (strcmp(argv[1], "launch") && strcmp(argv[1], "copy"))) {
    fprintf(stderr, "usage: cl_loop launch|copy <iterations> [warm-up iterations]\n");
    return 2;
  }
  int launch = !strcmp(argv[1], "launch");
  int n = atoi(argv[2]), warm = argc > 3 ? atoi(argv[3]) : n / 10;
  timed = getenv("CL_LOOP_TIMED") && !strcmp(getenv("CL_LOOP_TIMED"), "1");
  if (getenv("CL_LOOP_SYNC")) sync_every = atoi(getenv("CL_LOOP_SYNC"));
  if (sync_every < 1 || sync_every > MAX_SYNC) {
    fprintf(stderr, "cl_loop: CL_LOOP_SYNC must be 1..%d\n", MAX_SYNC);
    return 2;
  }
  cl_device_id device = pick_device();
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK(err);
  cl_queue_properties profiling[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, timed ? profiling : NULL, &err);
  CHECK(err);
  const char* src = "__kernel void tiny(__global int* p) { p[get_global_id(0)] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(prog, "tiny", &err);
  CHECK(err);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, COPY_BYTES, NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
  void* host = calloc(1, COPY_BYTES);

  run(launch, warm, q, k, buf, host);
  double t0 = now_ns();
  timed_loop(launch, n, q, k, buf, host);
  double per = (now_ns() - t0) / n;

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("RESULT %.1f maxrss_kib %ld device_ns %llu\n", per, ru.ru_maxrss, (unsigned long long)device_ns);
  fflush(stdout);

  free(host);
  clReleaseMemObject(buf);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return 0;
}
