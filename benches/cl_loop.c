/* The program side of the overhead benchmarks (issues #8, 21 and 39): an ordinary OpenCL program
 * that knows nothing of libpti. benches/overhead.py runs it untraced and with libpti (and
 * benches/bench_tool.c) preloaded, interleaving the modes, and compares the times it prints.
 *
 * usage: cl_loop launch|copy|latency <timed iterations> [warm-up iterations]
 *   launch   a one-work-item kernel enqueued again and again, a clFinish every CL_LOOP_SYNC
 *            launches (default 1024; 0: none until the end, a program that streams its work)
 *            and at the end (launch-bound);
 *   copy     blocking 1 MiB host-to-device writes (copy-bound; with CL_LOOP_TIMED=1, its floor:
 *            each write's own event, its START and END read after the call, then released);
 *   latency  as clpeak's kernel-latency test: one launch with the program's own event, a wait
 *            for it, and its QUEUED, START and END read; prints the medians of START - QUEUED
 *            (the launch latency) and END - START (the duration) the program measured itself,
 *            on an "OWN" line: what libpti must not move;
 *   anchor   launches with the program's own events on a profiling queue, each enqueue call
 *            bracketed by two reads of CLOCK_MONOTONIC_RAW (libpti's host clock), a clFinish
 *            every CL_LOOP_SYNC; writes "enter exit queued start end" per launch to the file
 *            $CL_LOOP_DUMP: the ground truth benches/anchor_error.py measures libpti's
 *            conversion of device timestamps against (issue 39).
 * The launch loop's pattern, from the environment (issue 39: each pattern has its own floor):
 *   CL_LOOP_SYNC=<n>     a clFinish every n launches (0: only at the end);
 *   CL_LOOP_THREADS=<t>  t threads, each with its own queue, sharing the launches;
 *   CL_LOOP_OOO=1        out-of-order queues;
 *   CL_LOOP_EVENTS=1     the program asks for an event per launch (as SYCL does) and releases
 *                        it after its next wait, without reading it;
 *   CL_LOOP_TIMED=1      the pattern's floor: the program times every launch itself, as one
 *                        that wants each kernel's device time and nothing else would (a
 *                        profiling queue, an event per launch, and after each wait every event's
 *                        START and END read and the event released);
 *   CL_LOOP_READ_EVERY=<n>  with CL_LOOP_TIMED=1: also every n launches between waits, the
 *                        events of the launches that have completed are read and released (END
 *                        first, stopping at the first without one; never a wait), as a tool that
 *                        bounds what it holds must in a program that streams;
 *   CL_LOOP_RELEASE_LATE=1  with CL_LOOP_READ_EVERY: the events read between waits are released
 *                        only at the next wait (what costs, the reads or the releases).
 * Prints "RESULT <ns per iteration> maxrss_kib <peak resident set> device_ns <sum>" on stdout.
 * The platform is the first whose name contains $PTI_TEST_PLATFORM (any, if unset); its first
 * GPU, else its first device.
 *
 * build: cc -std=c11 -O2 -pthread benches/cl_loop.c -o cl_loop -lOpenCL */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define COPY_BYTES (1u << 20)
#define MAX_THREADS 64

static int sync_every = 1024, timed, own_events, threads = 1, out_of_order, read_every, release_late;

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

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
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

/* One thread's share of the loop: its queue, its kernel, and the events it holds. */
struct worker {
  cl_command_queue q;
  cl_kernel k;
  cl_mem buf;
  const void* host;
  int launch, n;
  cl_event* events; /* room for a wait's worth of launches */
  cl_ulong device_ns; /* sum of the device times read (printed, so the reads are not optimised out) */
};

/* Reads (the floor) event `i` of `w` (`end`: its END if already read, else 0). */
static void read_event(struct worker* w, int i, cl_ulong end) {
  if (timed) {
    cl_ulong start;
    CHECK(clGetEventProfilingInfo(w->events[i], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    if (!end) CHECK(clGetEventProfilingInfo(w->events[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    w->device_ns += end - start;
  }
}

/* Waits for the queue; then reads the events from `read` up to `pending` and releases those from
 * `released` (each read, then released, in turn: the floor as it always was where both are 0). */
static void finish(struct worker* w, int read, int released, int pending) {
  CHECK(clFinish(w->q));
  for (int i = read < released ? read : released; i < pending; i++) {
    if (i >= read) read_event(w, i, 0);
    if (i >= released) CHECK(clReleaseEvent(w->events[i]));
  }
}

/* Without waiting: reads (and, unless CL_LOOP_RELEASE_LATE, releases) the events from `from` on
 * whose commands have completed (END readable), stopping at the first that has not; returns where
 * it stopped. */
static int read_completed(struct worker* w, int from, int pending) {
  for (; from < pending; from++) {
    cl_ulong end;
    if (clGetEventProfilingInfo(w->events[from], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) != CL_SUCCESS)
      break;
    read_event(w, from, end);
    if (!release_late) CHECK(clReleaseEvent(w->events[from]));
  }
  return from;
}

/* The loop body, `w->n` times; returns when the device has finished. */
__attribute__((noinline)) static void run(struct worker* w) {
  size_t global = 1;
  int pending = 0, read = 0, with_events = timed || own_events;
  for (int i = 0; i < w->n; i++) {
    if (w->launch) {
      CHECK(clEnqueueNDRangeKernel(w->q, w->k, 1, NULL, &global, NULL, 0, NULL,
                                   with_events ? &w->events[pending] : NULL));
      pending += with_events;
      if (sync_every && i % sync_every == sync_every - 1) {
        finish(w, read, release_late ? 0 : read, pending);
        pending = read = 0;
      } else if (timed && read_every && i % read_every == read_every - 1) {
        read = read_completed(w, read, pending);
      }
    } else if (timed) {
      /* The copy's floor: its own event, START and END read once the call returned, released. */
      cl_event e;
      CHECK(clEnqueueWriteBuffer(w->q, w->buf, CL_TRUE, 0, COPY_BYTES, w->host, 0, NULL, &e));
      cl_ulong start, end;
      CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
      CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
      w->device_ns += end - start;
      CHECK(clReleaseEvent(e));
    } else
      CHECK(clEnqueueWriteBuffer(w->q, w->buf, CL_TRUE, 0, COPY_BYTES, w->host, 0, NULL, NULL));
  }
  finish(w, read, release_late ? 0 : read, pending);
}

/* A thread of the timed loop (benches/callgrind.sh counts inside it), and of the warm-up. */
__attribute__((noinline)) static void* run_thread(void* w) {
  run(w);
  return NULL;
}

__attribute__((noinline)) static void* warm_thread(void* w) {
  run(w);
  return NULL;
}

/* Runs every worker, on threads of `body` where there are several. */
static void run_all(struct worker* w, int count, void* (*body)(void*)) {
  if (count == 1) {
    body(w);
    return;
  }
  pthread_t t[MAX_THREADS];
  for (int i = 0; i < count; i++)
    if (pthread_create(&t[i], NULL, body, &w[i])) {
      fprintf(stderr, "cl_loop: pthread_create failed\n");
      exit(2);
    }
  for (int i = 0; i < count; i++) pthread_join(t[i], NULL);
}

/* The timed loop: benches/callgrind.sh counts instructions only inside this function (and the
 * threads it starts). */
__attribute__((noinline)) static void timed_loop(struct worker* w, int count) {
  if (count == 1)
    run(w); /* not run_thread: callgrind's toggle would turn collection off again */
  else
    run_all(w, count, run_thread);
}

static int cmp_ulong(const void* a, const void* b) {
  cl_ulong x = *(const cl_ulong*)a, y = *(const cl_ulong*)b;
  return (x > y) - (x < y);
}

/* clpeak's kernel-latency pattern: each launch waited for, its own timestamps read. */
static void latency(struct worker* w, int warm, int n) {
  size_t global = 1;
  cl_ulong* lat = calloc(n, sizeof *lat);
  cl_ulong* dur = calloc(n, sizeof *dur);
  if (!lat || !dur) exit(2);
  double t0 = 0;
  for (int i = -warm; i < n; i++) {
    if (i == 0) t0 = now_ns();
    cl_event e;
    CHECK(clEnqueueNDRangeKernel(w->q, w->k, 1, NULL, &global, NULL, 0, NULL, &e));
    CHECK(clWaitForEvents(1, &e));
    cl_ulong queued, start, end;
    CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL));
    CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    CHECK(clReleaseEvent(e));
    if (i >= 0) lat[i] = start - queued, dur[i] = end - start;
  }
  double per = (now_ns() - t0) / n;
  qsort(lat, n, sizeof *lat, cmp_ulong);
  qsort(dur, n, sizeof *dur, cmp_ulong);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("RESULT %.1f maxrss_kib %ld device_ns 0\n", per, ru.ru_maxrss);
  printf("OWN latency_ns %llu duration_ns %llu\n", (unsigned long long)lat[n / 2], (unsigned long long)dur[n / 2]);
  free(lat);
  free(dur);
}

static cl_ulong raw_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return (cl_ulong)t.tv_sec * 1000000000u + (cl_ulong)t.tv_nsec;
}

/* The anchor loop: every launch's bracket and its device times, written to $CL_LOOP_DUMP. */
static void anchor(struct worker* w, int n) {
  const char* path = getenv("CL_LOOP_DUMP");
  FILE* out = path ? fopen(path, "wx") : NULL;
  if (!out) {
    fprintf(stderr, "cl_loop: anchor needs CL_LOOP_DUMP, a file that does not exist yet\n");
    exit(2);
  }
  int every = sync_every ? sync_every : n;
  cl_ulong(*t)[2] = calloc(every, sizeof *t);
  cl_event* ev = calloc(every, sizeof *ev);
  if (!t || !ev) exit(2);
  size_t global = 1;
  double t0 = now_ns();
  for (int i = 0, pending = 0; i < n; i++) {
    t[pending][0] = raw_ns();
    CHECK(clEnqueueNDRangeKernel(w->q, w->k, 1, NULL, &global, NULL, 0, NULL, &ev[pending]));
    t[pending][1] = raw_ns();
    if (++pending == every || i == n - 1) {
      CHECK(clFinish(w->q));
      for (int j = 0; j < pending; j++) {
        cl_ulong q, s, e;
        CHECK(clGetEventProfilingInfo(ev[j], CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, NULL));
        CHECK(clGetEventProfilingInfo(ev[j], CL_PROFILING_COMMAND_START, sizeof s, &s, NULL));
        CHECK(clGetEventProfilingInfo(ev[j], CL_PROFILING_COMMAND_END, sizeof e, &e, NULL));
        CHECK(clReleaseEvent(ev[j]));
        fprintf(out, "%llu %llu %llu %llu %llu\n", (unsigned long long)t[j][0], (unsigned long long)t[j][1],
                (unsigned long long)q, (unsigned long long)s, (unsigned long long)e);
      }
      pending = 0;
    }
  }
  printf("RESULT %.1f maxrss_kib 0 device_ns 0\n", (now_ns() - t0) / n);
  if (fclose(out)) exit(2);
  free(t);
  free(ev);
}

int main(int argc, char** argv) {
  if (argc < 3 || (strcmp(argv[1], "launch") && strcmp(argv[1], "copy") && strcmp(argv[1], "latency") &&
                   strcmp(argv[1], "anchor"))) {
    fprintf(stderr, "usage: cl_loop launch|copy|latency|anchor <iterations> [warm-up iterations]\n");
    return 2;
  }
  int launch = strcmp(argv[1], "copy") != 0, lat = !strcmp(argv[1], "latency") || !strcmp(argv[1], "anchor");
  int n = atoi(argv[2]), warm = argc > 3 ? atoi(argv[3]) : n / 10;
  timed = env_int("CL_LOOP_TIMED", 0) == 1;
  own_events = env_int("CL_LOOP_EVENTS", 0) == 1;
  out_of_order = env_int("CL_LOOP_OOO", 0) == 1;
  sync_every = env_int("CL_LOOP_SYNC", 1024);
  threads = env_int("CL_LOOP_THREADS", 1);
  read_every = env_int("CL_LOOP_READ_EVERY", 0);
  release_late = env_int("CL_LOOP_RELEASE_LATE", 0) == 1;
  if (n < 1 || warm < 0 || sync_every < 0 || read_every < 0 || threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "cl_loop: bad arguments (CL_LOOP_SYNC >= 0, CL_LOOP_READ_EVERY >= 0, 1 <= CL_LOOP_THREADS <= %d)\n",
            MAX_THREADS);
    return 2;
  }
  cl_device_id device = pick_device();
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue_properties props = (timed || lat ? CL_QUEUE_PROFILING_ENABLE : 0) |
                                      (out_of_order ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);
  cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, props, 0};
  const char* src = "__kernel void tiny(__global int* p) { p[get_global_id(0)] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
  void* host = calloc(1, COPY_BYTES);
  struct worker w[MAX_THREADS];
  /* Each thread's share of the launches, and of the warm-up. */
  int share = n / threads, warm_share = warm / threads;
  int held = sync_every ? sync_every : (share > warm_share ? share : warm_share);
  for (int i = 0; i < threads; i++) {
    w[i] = (struct worker){.launch = launch, .host = host};
    w[i].q = clCreateCommandQueueWithProperties(ctx, device, props ? properties : NULL, &err);
    CHECK(err);
    w[i].k = clCreateKernel(prog, "tiny", &err);
    CHECK(err);
    w[i].buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, COPY_BYTES, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(w[i].k, 0, sizeof w[i].buf, &w[i].buf));
    w[i].events = calloc(held + 1, sizeof(cl_event));
    if (!w[i].events) exit(2);
  }

  if (!strcmp(argv[1], "anchor")) {
    anchor(&w[0], n);
  } else if (lat) {
    latency(&w[0], warm, n);
  } else {
    for (int i = 0; i < threads; i++) w[i].n = warm_share;
    run_all(w, threads, warm_thread);
    for (int i = 0; i < threads; i++) w[i].n = share;
    double t0 = now_ns();
    timed_loop(w, threads);
    double per = (now_ns() - t0) / ((double)share * threads);
    cl_ulong device_ns = 0;
    for (int i = 0; i < threads; i++) device_ns += w[i].device_ns;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("RESULT %.1f maxrss_kib %ld device_ns %llu\n", per, ru.ru_maxrss, (unsigned long long)device_ns);
  }
  fflush(stdout);

  for (int i = 0; i < threads; i++) {
    clReleaseMemObject(w[i].buf);
    clReleaseKernel(w[i].k);
    clReleaseCommandQueue(w[i].q);
    free(w[i].events);
  }
  free(host);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  return 0;
}
