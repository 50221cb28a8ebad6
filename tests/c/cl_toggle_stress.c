/* Exact accounting under toggles, on a real OpenCL runtime: two threads submit kernels, copies,
 * fills, markers and barriers (with external correlation IDs pushed) while a third enables and
 * disables the view kinds at random and flushes; the tool lends buffers of random sizes and
 * refuses some requests. At the end, for every kind, the records libpti emitted
 * (ptiViewGetEmittedRecordCount) must be the records handed to buffer_completed plus those it
 * dropped (ptiViewGetDroppedRecordCount).
 *
 * Prints "S <kind> <emitted> <delivered> <dropped>" per kind, then "S OK" or "S MISMATCH".
 * Arguments: iterations per worker (default 300), seed (default 1). */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "cl_pick.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"
#include "pti_okay.h"


static const pti_view_kind KINDS[] = {
    PTI_VIEW_DRIVER_API,           PTI_VIEW_DEVICE_GPU_KERNEL,      PTI_VIEW_DEVICE_CPU_KERNEL,
    PTI_VIEW_DEVICE_GPU_MEM_COPY,  PTI_VIEW_DEVICE_GPU_MEM_FILL,    PTI_VIEW_DEVICE_SYNCHRONIZATION,
    PTI_VIEW_COLLECTION_OVERHEAD,  PTI_VIEW_EXTERNAL_CORRELATION,   PTI_VIEW_EXT_KERNEL_LAUNCH,
};
#define N_KINDS (sizeof KINDS / sizeof KINDS[0])

static _Atomic unsigned long long delivered[N_KINDS];
static _Atomic unsigned long long foreign;
static _Atomic unsigned lend_seed = 7;

static int kind_index(pti_view_kind kind) {
  for (size_t i = 0; i < N_KINDS; ++i)
    if (KINDS[i] == kind) return (int)i;
  return -1;
}

static unsigned next_random(unsigned* state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}

/* Lends 0 (a refusal), room for one or two records, or a few KiB. */
static void requested(unsigned char** buf, size_t* size) {
  unsigned s = atomic_fetch_add(&lend_seed, 0x9e3779b9u);
  static const size_t sizes[] = {0, 72, 150, 600, 4096, 65536};
  *size = sizes[next_random(&s) % (sizeof sizes / sizeof sizes[0])];
  /* aligned_alloc wants a multiple of the alignment; the tool still lends *size bytes. */
  *buf = *size ? aligned_alloc(8, (*size + 7) & ~(size_t)7) : NULL;
  if (!*buf) *size = 0;
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buf, used, &r) == PTI_SUCCESS && r) {
    int i = kind_index(r->_view_kind);
    if (i < 0) atomic_fetch_add(&foreign, 1);
    else atomic_fetch_add(&delivered[i], 1);
  }
  free(buf);
}

static const char* SOURCE = "__kernel void twice(__global float* a) { a[get_global_id(0)] *= 2.0f; }";

static cl_context context;
static cl_device_id device;
static int iterations = 300;
static atomic_int workers_left;

/* One worker: its own queue, buffer and kernel object (arguments are per kernel object). */
static void* worker(void* arg) {
  cl_kernel kernel = arg;
  cl_int err;
  cl_command_queue q = queue_on(context, device);
  float host[256] = {0};
  float pattern = 1.0f;
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  CHECK(err);
  for (int i = 0; i < iterations; ++i) {
    OKAY(ptiViewPushExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, (uint64_t)i));
    CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(q, buf, &pattern, sizeof pattern, 0, sizeof host, 0, NULL, NULL));
    size_t global = 256;
    CHECK(clSetKernelArg(kernel, 0, sizeof buf, &buf));
    CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, NULL));
    CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clFinish(q));
    uint64_t id = 0;
    OKAY(ptiViewPopExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, &id));
  }
  CHECK(clReleaseMemObject(buf));
  CHECK(clReleaseCommandQueue(q));
  atomic_fetch_sub(&workers_left, 1);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) iterations = atoi(argv[1]);
  unsigned seed = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
  OKAY(ptiViewSetCallbacks(requested, completed));
  for (size_t i = 0; i < N_KINDS; ++i) OKAY(ptiViewEnable(KINDS[i]));

  device = pick_device();
  cl_int err;
  context = context_on(device);
  cl_program program = built(context, device, SOURCE);
  pthread_t threads[2];
  cl_kernel kernels[2];
  atomic_store(&workers_left, 2);
  for (int t = 0; t < 2; ++t) {
    kernels[t] = clCreateKernel(program, "twice", &err);
    CHECK(err);
    CHECK(pthread_create(&threads[t], NULL, worker, kernels[t]) == 0 ? CL_SUCCESS : -1);
  }

  /* The toggler: a random kind on or off, or a flush, every 0 to 200 microseconds. */
  unsigned long long toggles = 0, flushes = 0;
  while (atomic_load(&workers_left) > 0) {
    unsigned r = next_random(&seed);
    if (r % 8 == 0) {
      OKAY(ptiFlushAllViews());
      flushes++;
    } else {
      pti_view_kind kind = KINDS[(r >> 4) % N_KINDS];
      OKAY((r >> 12) % 2 ? ptiViewEnable(kind) : ptiViewDisable(kind));
      toggles++;
    }
    struct timespec pause = {0, (long)(next_random(&seed) % 200) * 1000};
    nanosleep(&pause, NULL);
  }
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);

  /* Every command finished: the first flush harvests and hands back; the overhead view writes a
   * record of that flush, so every view goes off before the second flush hands that back. */
  OKAY(ptiFlushAllViews());
  for (size_t i = 0; i < N_KINDS; ++i) OKAY(ptiViewDisable(KINDS[i]));
  OKAY(ptiFlushAllViews());
  uint64_t pending = 1;
  OKAY(ptiViewGetPendingDeviceRecordCount(&pending));

  int ok = pending == 0 && atomic_load(&foreign) == 0;
  unsigned long long total = 0;
  for (size_t i = 0; i < N_KINDS; ++i) {
    uint64_t emitted = 0, dropped = 0;
    OKAY(ptiViewGetEmittedRecordCount(KINDS[i], &emitted));
    OKAY(ptiViewGetDroppedRecordCount(KINDS[i], &dropped));
    unsigned long long got = atomic_load(&delivered[i]);
    printf("S %d %llu %llu %llu\n", (int)KINDS[i], (unsigned long long)emitted, got,
           (unsigned long long)dropped);
    if (emitted != got + dropped) ok = 0;
    total += emitted;
  }
  printf("S toggles %llu flushes %llu pending %llu foreign %llu emitted %llu\n", toggles, flushes,
         (unsigned long long)pending, atomic_load(&foreign), total);
  printf(ok ? "S OK\n" : "S MISMATCH\n");
  for (int t = 0; t < 2; ++t) CHECK(clReleaseKernel(kernels[t]));
  CHECK(clReleaseProgram(program));
  CHECK(clReleaseContext(context));
  return ok ? 0 : 2;
}
