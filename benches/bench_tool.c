/* The tool side of the overhead benchmark (issue #8): preloaded with libpti into benches/cl_loop,
 * it sets libpti up as $PTI_BENCH_MODE says, before the program's main:
 *   idle       nothing enabled (libpti loaded, its OpenCL layer active, nobody listening);
 *   callbacks  one subscriber, an empty callback (it only counts) on every driver-API call;
 *   views      API, kernel, copy and fill views, with buffers that are walked and freed;
 *   both       callbacks and views together.
 * With PTI_BENCH_SYCL=1 the SYCL runtime's calls are included (runtime-API domain and view).
 * PTI_BENCH_VIEWS=api,kernel,copy,fill (any of them) narrows the views of `views` and `both`, to
 * see what each costs.
 * PTI_BENCH_BUFFER_BYTES sets the size of the buffers it lends (default 1 MiB; benches/callgrind.sh
 * lends small ones, so that walking them falls evenly into every counted loop).
 * With PTI_BENCH_DUMP=<file> (a file that does not exist yet) it writes each kernel record's
 * "append start end" there, in the order the buffers deliver them (benches/anchor_error.py).
 * At exit it flushes and prints "BENCH_TOOL calls <n> records <n> dropped <n>" on stderr, so the
 * driver (benches/overhead.py) can check that the mode really traced what it claims.
 *
 * Built with -DBENCH_INTEL_ABI and linked to a libpti_view.so.1 instead, it is a tool of Intel's
 * PTI 1.x ABI (views only; no dropped counts, which that ABI lacks), so the same binary measures
 * Intel's library and libpti's drop-in for it (benches/overhead.py sycl, modes i and j).
 *
 * build: cc -std=c11 -O2 -shared -fPIC -Iinclude benches/bench_tool.c -o bench_tool.so -lpti */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BENCH_INTEL_ABI
#include "pti/pti_callback.h"
#include "pti/pti_ext.h"
#endif
#include "pti/pti_view.h"

#define BUFFER_BYTES (1u << 20)
static size_t buffer_bytes = BUFFER_BYTES;

static uint64_t calls, records;
static const pti_view_kind VIEWS[] = {PTI_VIEW_DRIVER_API, PTI_VIEW_DEVICE_GPU_KERNEL, PTI_VIEW_DEVICE_CPU_KERNEL,
                                      PTI_VIEW_DEVICE_GPU_MEM_COPY, PTI_VIEW_DEVICE_GPU_MEM_FILL};
#define NVIEWS (sizeof VIEWS / sizeof VIEWS[0])
static int views_on, sycl;
static FILE* dump;

/* Whether view VIEWS[i] is wanted: every one, unless $PTI_BENCH_VIEWS names some. */
static int wanted(size_t i) {
  static const char* names[] = {"api", "kernel", "kernel", "copy", "fill"};
  const char* list = getenv("PTI_BENCH_VIEWS");
  return !list || strstr(list, names[i]) != NULL;
}

#ifndef BENCH_INTEL_ABI
static void on_call(void* user, pti_callback_domain domain, pti_api_group_id group, uint32_t id, void* data) {
  (void)user, (void)domain, (void)group, (void)id, (void)data;
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
}
#endif

/* Walked buffers are kept for reuse (a tool's usual pool): freeing one and allocating the next
 * made glibc consolidate its free lists for every buffer of 64 KiB or more, which slowed the
 * program's own allocations and was counted against libpti. */
#define POOLED 16
static unsigned char* pool[POOLED];
static int pooled;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void requested(unsigned char** buffer, size_t* size) {
  pthread_mutex_lock(&pool_lock);
  *buffer = pooled ? pool[--pooled] : NULL;
  pthread_mutex_unlock(&pool_lock);
  if (!*buffer) *buffer = malloc(buffer_bytes);
  *size = *buffer ? buffer_bytes : 0;
}

static void recycle(unsigned char* buffer) {
  pthread_mutex_lock(&pool_lock);
  if (pooled < POOLED) {
    pool[pooled++] = buffer;
    buffer = NULL;
  }
  pthread_mutex_unlock(&pool_lock);
  free(buffer);
}

static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) {
    __atomic_fetch_add(&records, 1, __ATOMIC_RELAXED);
    if (dump && (r->_view_kind == PTI_VIEW_DEVICE_GPU_KERNEL || r->_view_kind == PTI_VIEW_DEVICE_CPU_KERNEL)) {
      const pti_view_record_kernel* k = (const pti_view_record_kernel*)r;
      fprintf(dump, "%llu %llu %llu\n", (unsigned long long)k->_append_timestamp,
              (unsigned long long)k->_start_timestamp, (unsigned long long)k->_end_timestamp);
    }
  }
  recycle(buffer);
}

static void fail(const char* what) {
  fprintf(stderr, "bench_tool: %s failed\n", what);
  exit(2);
}

__attribute__((constructor)) static void start(void) {
  const char* mode = getenv("PTI_BENCH_MODE");
  if (!mode || !strcmp(mode, "idle")) return;
  const char* bytes = getenv("PTI_BENCH_BUFFER_BYTES");
  if (bytes && (buffer_bytes = strtoul(bytes, NULL, 10)) < 4096) fail("PTI_BENCH_BUFFER_BYTES (at least 4096)");
  int want_callbacks = !strcmp(mode, "callbacks") || !strcmp(mode, "both");
  views_on = !strcmp(mode, "views") || !strcmp(mode, "both");
  sycl = getenv("PTI_BENCH_SYCL") && !strcmp(getenv("PTI_BENCH_SYCL"), "1");
  if (!want_callbacks && !views_on) fail("PTI_BENCH_MODE (idle, callbacks, views or both)");
  if (want_callbacks) {
#ifdef BENCH_INTEL_ABI
    fail("callbacks (not in the Intel ABI build)");
#else
    pti_callback_subscriber sub;
    if (ptiCallbackSubscribe(&sub, on_call, NULL) != PTI_SUCCESS) fail("ptiCallbackSubscribe");
    if (ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_DRIVER_API) != PTI_SUCCESS) fail("ptiCallbackEnableDomain");
    if (sycl && ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_RUNTIME_API) != PTI_SUCCESS)
      fail("ptiCallbackEnableDomain(runtime)");
#endif
  }
  if (views_on) {
    const char* dump_path = getenv("PTI_BENCH_DUMP");
    if (dump_path && !(dump = fopen(dump_path, "wx"))) fail("PTI_BENCH_DUMP (a new file)");
    if (ptiViewSetCallbacks(requested, completed) != PTI_SUCCESS) fail("ptiViewSetCallbacks");
    for (size_t i = 0; i < NVIEWS; i++) {
#ifdef BENCH_INTEL_ABI
      /* Intel's library may refuse a kind (the CPU kernel view): it then records less. */
      if (wanted(i)) ptiViewEnable(VIEWS[i]);
#else
      if (wanted(i) && ptiViewEnable(VIEWS[i]) != PTI_SUCCESS) fail("ptiViewEnable");
#endif
    }
    if (sycl && ptiViewEnable(PTI_VIEW_RUNTIME_API) != PTI_SUCCESS) fail("ptiViewEnable(runtime)");
  }
}

__attribute__((destructor)) static void finish(void) {
  uint64_t dropped = 0;
  if (views_on) {
    ptiFlushAllViews();
#ifndef BENCH_INTEL_ABI
    for (size_t i = 0; i < NVIEWS; i++) {
      uint64_t n = 0;
      ptiViewGetDroppedRecordCount(VIEWS[i], &n);
      dropped += n;
    }
    uint64_t n = 0;
    if (sycl && ptiViewGetDroppedRecordCount(PTI_VIEW_RUNTIME_API, &n) == PTI_SUCCESS) dropped += n;
#endif
  }
  if (dump && fclose(dump)) fail("writing PTI_BENCH_DUMP");
  fprintf(stderr, "BENCH_TOOL calls %llu records %llu dropped %llu\n", (unsigned long long)calls,
          (unsigned long long)records, (unsigned long long)dropped);
}
