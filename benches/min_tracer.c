/* The least a tracer can do for benches/cl_loop.c's launches and still hand a tool the records
 * libpti's views give it (issue 39): a reference point for benches/callgrind.sh's mode `minimal`,
 * and of overhead.py's PRELOAD variants (the same loop timed on a GPU), not a tracer to use.
 *
 * Preloaded in libpti's place (LD_PRELOAD), it interposes the three OpenCL functions cl_loop
 * calls in its loop and, for each call, takes two host times and writes an API record
 * (pti_view_record_api); for each launch it gives the runtime an event (the program's, retained,
 * or its own), keeps the command pending, and at the program's clFinish of its queue reads START
 * and END, writes a kernel record (pti_view_record_kernel_v2: times, IDs, name and queue; the
 * fields it has no value for zeroed with the rest) and releases the event. Full buffers of 64 KiB
 * are walked record by record, as a tool walks them. Outside the loop, queues are made with
 * profiling, as libpti makes them.
 *
 * What it leaves out, each of which libpti does: ENTER and EXIT callbacks and their checks, a
 * conversion of device times that follows drift (here one fixed offset), the program's
 * reference counts kept as the program sees them, panics and hostile input, fork, flushes from
 * other threads, lost-record counts, external correlation IDs, every other OpenCL function, every
 * other backend. So its count is below any tracer's that does those: what libpti's own work
 * (all views minus the floor) compares with. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "pti/pti_view.h"

typedef cl_int (*enqueue_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                             const size_t*, cl_uint, const cl_event*, cl_event*);
typedef cl_int (*queue_fn)(cl_command_queue);
typedef cl_int (*event_fn)(cl_event);
typedef cl_int (*profiling_fn)(cl_event, cl_profiling_info, size_t, void*, size_t*);
typedef cl_int (*kernel_info_fn)(cl_kernel, cl_kernel_info, size_t, void*, size_t*);
typedef cl_command_queue (*create_queue_fn)(cl_context, cl_device_id, const cl_queue_properties*,
                                            cl_int*);

static enqueue_fn real_enqueue;
static queue_fn real_finish;
static event_fn real_release, real_retain;
static profiling_fn real_profiling;
static kernel_info_fn real_kernel_info;
static create_queue_fn real_create_queue;

/* One launch awaiting its record. */
struct pending {
  cl_event event;
  cl_command_queue queue;
  const char* name;
  uint32_t correlation;
  uint64_t enter, exit;
};

/* A thread's buffer and pending launches. */
struct thread {
  unsigned char* buffer;
  size_t used;
  struct pending* pending;
  size_t count, capacity;
  uint32_t tid;
  cl_kernel kernel; /* the last kernel launched, and its name */
  char name[128]; /* records point here: cl_loop launches one kernel per thread */
};

static __thread struct thread* self;
static uint32_t pid, correlation;
static uint64_t kernels, calls, offset_ns;
#define BUFFER_BYTES 65536

static void init(void) __attribute__((constructor));
static void init(void) {
  real_enqueue = (enqueue_fn)dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
  real_finish = (queue_fn)dlsym(RTLD_NEXT, "clFinish");
  real_release = (event_fn)dlsym(RTLD_NEXT, "clReleaseEvent");
  real_retain = (event_fn)dlsym(RTLD_NEXT, "clRetainEvent");
  real_profiling = (profiling_fn)dlsym(RTLD_NEXT, "clGetEventProfilingInfo");
  real_kernel_info = (kernel_info_fn)dlsym(RTLD_NEXT, "clGetKernelInfo");
  real_create_queue = (create_queue_fn)dlsym(RTLD_NEXT, "clCreateCommandQueueWithProperties");
  pid = (uint32_t)getpid();
}

static void deliver(struct thread* t);

/* Says what it recorded, as bench_tool.c does ("BENCH_TOOL ... records <n>", which overhead.py
 * checks), with its two kinds apart (benches/callgrind.sh's log; tests/opencl.rs checks them): the
 * buffer of the thread that exits the program is walked first. */
static void fini(void) __attribute__((destructor));
static void fini(void) {
  if (self) deliver(self);
  fprintf(stderr, "BENCH_TOOL records %llu kernels %llu api %llu dropped 0\n",
          (unsigned long long)(kernels + calls), (unsigned long long)kernels, (unsigned long long)calls);
}

static uint64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static struct thread* thread(void) {
  if (!self) {
    self = calloc(1, sizeof *self);
    self->buffer = malloc(BUFFER_BYTES);
    self->tid = (uint32_t)syscall(SYS_gettid);
  }
  return self;
}

/* The tool's walk of a full buffer: one size lookup per record. */
static void deliver(struct thread* t) {
  for (size_t at = 0; at < t->used;) {
    uint32_t kind = *(const uint32_t*)(t->buffer + at);
    int api = kind == PTI_VIEW_DRIVER_API;
    at += api ? sizeof(pti_view_record_api) : sizeof(pti_view_record_kernel_v2);
    __atomic_add_fetch(api ? &calls : &kernels, 1, __ATOMIC_RELAXED);
  }
  t->used = 0;
}

static void* room(struct thread* t, size_t size) {
  if (t->used + size > BUFFER_BYTES) deliver(t);
  void* at = t->buffer + t->used;
  t->used += (size + 7) & ~(size_t)7;
  return at;
}

static uint32_t api_record(struct thread* t, uint32_t id, uint64_t start, uint64_t end, cl_int status) {
  uint32_t corr = __atomic_add_fetch(&correlation, 1, __ATOMIC_RELAXED);
  pti_view_record_api* r = room(t, sizeof *r);
  r->_view_kind._view_kind = PTI_VIEW_DRIVER_API;
  r->_start_timestamp = start;
  r->_end_timestamp = end;
  r->_api_group = PTI_API_GROUP_OPENCL;
  r->_api_id = id;
  r->_process_id = pid;
  r->_thread_id = t->tid;
  r->_correlation_id = corr;
  r->_return_code = (uint32_t)status;
  return corr;
}

/* Queues are made with profiling, as libpti makes them while a device view is enabled (outside
 * the counted loop). */
cl_command_queue clCreateCommandQueueWithProperties(cl_context c, cl_device_id d,
                                                    const cl_queue_properties* properties,
                                                    cl_int* err) {
  cl_queue_properties flags = 0;
  for (const cl_queue_properties* p = properties; p && *p; p += 2)
    if (p[0] == CL_QUEUE_PROPERTIES) flags = p[1];
  cl_queue_properties with[] = {CL_QUEUE_PROPERTIES, flags | CL_QUEUE_PROFILING_ENABLE, 0};
  return real_create_queue(c, d, with, err);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* offset,
                              const size_t* global, const size_t* local, cl_uint waits,
                              const cl_event* wait_list, cl_event* event) {
  struct thread* t = thread();
  cl_event own;
  uint64_t enter = now();
  cl_int status = real_enqueue(q, k, dim, offset, global, local, waits, wait_list, event ? event : &own);
  uint64_t exit = now();
  uint32_t corr = api_record(t, 60, enter, exit, status);
  if (status != CL_SUCCESS) return status;
  if (event) real_retain(*event);
  if (k != t->kernel) {
    real_kernel_info(k, CL_KERNEL_FUNCTION_NAME, sizeof t->name, t->name, NULL);
    t->kernel = k;
  }
  if (t->count == t->capacity) {
    t->capacity = t->capacity ? t->capacity * 2 : 1024;
    t->pending = realloc(t->pending, t->capacity * sizeof *t->pending);
  }
  t->pending[t->count++] = (struct pending){event ? *event : own, q, t->name, corr, enter, exit};
  return status;
}

static void kernel_record(struct thread* t, const struct pending* p, uint64_t start, uint64_t end) {
  pti_view_record_kernel_v2* r = room(t, sizeof *r);
  memset(r, 0, sizeof *r);
  r->_view_kind._view_kind = PTI_VIEW_DEVICE_CPU_KERNEL;
  r->_queue_handle = p->queue;
  r->_name = p->name;
  r->_correlation_id = p->correlation;
  r->_thread_id = t->tid;
  r->_append_timestamp = p->enter;
  r->_submit_timestamp = p->exit;
  r->_start_timestamp = start - offset_ns;
  r->_end_timestamp = end - offset_ns;
  r->_kernel_id = p->correlation;
}

cl_int clFinish(cl_command_queue q) {
  struct thread* t = thread();
  uint64_t enter = now();
  cl_int status = real_finish(q);
  uint64_t exit = now();
  api_record(t, 48, enter, exit, status);
  size_t kept = 0;
  for (size_t i = 0; i < t->count; i++) {
    struct pending* p = &t->pending[i];
    cl_ulong start, end;
    if (p->queue != q || real_profiling(p->event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) != CL_SUCCESS) {
      t->pending[kept++] = *p;
      continue;
    }
    real_profiling(p->event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    kernel_record(t, p, start, end);
    real_release(p->event);
  }
  t->count = kept;
  return status;
}

cl_int clReleaseEvent(cl_event e) {
  struct thread* t = thread();
  uint64_t enter = now();
  cl_int status = real_release(e);
  api_record(t, 45, enter, now(), status);
  return status;
}
