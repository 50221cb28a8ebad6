/* fork() and exit() in a process whose threads are tracing, through the C API. Four threads make
 * simulated calls (pti_ext.h) in a loop, each under a pushed external ID, and flush now and
 * then, with small buffers; meanwhile:
 *
 *   fork_exit fork   the main thread forks 20 times. Each child (one thread: the one that forked)
 *                    makes 500 traced calls, flushes and checks that it saw every callback and
 *                    every record of its own calls, then exits. The parent then stops its
 *                    threads and checks emitted = delivered + dropped exactly.
 *   fork_exit exit   the main thread calls exit(0) with the threads still tracing and nothing
 *                    flushed. libpti's exit hook hands back the buffers; records made after it
 *                    are dropped and counted. A destructor of this program, which runs after the
 *                    exit hook, stops the threads and checks emitted = delivered + dropped.
 *
 * Prints one "fork_exit ...: ok" line and exits 0 when the checks held. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pti/pti_callback.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"

#define THREADS 4
#define FORKS 20
#define CHILD_CALLS 500

static atomic_ullong emitted_api, delivered_api, delivered_ext, callbacks;
static atomic_ullong own_records; /* in a child: records of its own thread */
static atomic_int stop;
static pid_t own_tid;
static pthread_t threads[THREADS];

static void on_callback(void* u, pti_callback_domain d, pti_api_group_id g, uint32_t id, void* data) {
  (void)u, (void)d, (void)g, (void)id, (void)data;
  atomic_fetch_add(&callbacks, 1);
}

/* Small buffers: a few records each, so hand-backs happen all the time. */
static void requested(unsigned char** buf, size_t* size) {
  *size = 256;
  *buf = malloc(*size);
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* rec = NULL;
  while (ptiViewGetNextRecord(buf, used, &rec) == PTI_SUCCESS) {
    if (rec->_view_kind == PTI_VIEW_DRIVER_API) {
      atomic_fetch_add(&delivered_api, 1);
      if (((pti_view_record_api*)rec)->_thread_id == (uint32_t)own_tid) atomic_fetch_add(&own_records, 1);
    } else if (rec->_view_kind == PTI_VIEW_EXTERNAL_CORRELATION) {
      atomic_fetch_add(&delivered_ext, 1);
    }
  }
  free(buf);
}

static int32_t body(void* u) { return (int32_t)(intptr_t)u; }

static int traced_call(uint64_t external) {
  ptiViewPushExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, external);
  int32_t status = -1;
  pti_result r = ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, body, (void*)7, &status);
  uint64_t popped = 0;
  ptiViewPopExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, &popped);
  return r == PTI_SUCCESS && status == 7 && popped == external;
}

static void* tracer(void* arg) {
  uint64_t i = 0, me = (uint64_t)(intptr_t)arg;
  while (!atomic_load(&stop)) {
    if (!traced_call(me << 32 | i)) {
      fprintf(stderr, "a traced call failed on thread %llu\n", (unsigned long long)me);
      abort();
    }
    atomic_fetch_add(&emitted_api, 1);
    if (++i % 64 == me) ptiFlushAllViews();
  }
  return NULL;
}

static uint64_t dropped(pti_view_kind kind) {
  uint64_t n = 0;
  if (ptiViewGetDroppedRecordCount(kind, &n) != PTI_SUCCESS) abort();
  return n;
}

static void set_up(void) {
  pti_callback_subscriber sub = NULL;
  if (ptiCallbackSubscribe(&sub, on_callback, NULL) != PTI_SUCCESS ||
      ptiCallbackEnable(1, sub, PTI_API_GROUP_OPENCL, clFinish_id) != PTI_SUCCESS ||
      ptiViewSetCallbacks(requested, completed) != PTI_SUCCESS || ptiViewEnable(PTI_VIEW_DRIVER_API) != PTI_SUCCESS ||
      ptiViewEnable(PTI_VIEW_EXTERNAL_CORRELATION) != PTI_SUCCESS) {
    fprintf(stderr, "set-up failed\n");
    exit(2);
  }
  for (intptr_t t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, tracer, (void*)t);
}

static void stop_threads(void) {
  atomic_store(&stop, 1);
  for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
}

/* emitted = delivered + dropped, for both views: one API and one external record per call. */
static int balanced(const char* what) {
  unsigned long long e = atomic_load(&emitted_api), api = atomic_load(&delivered_api),
                     ext = atomic_load(&delivered_ext), dapi = dropped(PTI_VIEW_DRIVER_API),
                     dext = dropped(PTI_VIEW_EXTERNAL_CORRELATION);
  char line[256];
  int n = snprintf(line, sizeof line, "%s: %llu calls; API records %llu delivered + %llu dropped; external %llu + %llu\n",
                   what, e, api, dapi, ext, dext);
  if (write(1, line, (size_t)n) < 0) return 0;
  return api + dapi == e && ext + dext == e;
}

static int child(void) {
  own_tid = (pid_t)syscall(SYS_gettid);
  atomic_store(&callbacks, 0);
  atomic_store(&own_records, 0);
  for (int i = 0; i < CHILD_CALLS; i++)
    if (!traced_call((uint64_t)i)) return 10;
  if (ptiFlushAllViews() != PTI_SUCCESS) return 11;
  if (atomic_load(&callbacks) != 2 * CHILD_CALLS) return 12;
  if (atomic_load(&own_records) != CHILD_CALLS) return 13;
  if (dropped(PTI_VIEW_DRIVER_API) != 0) return 14;
  return 0;
}

static int fork_scenario(void) {
  set_up();
  int bad = 0;
  for (int f = 0; f < FORKS; f++) {
    usleep(2000);
    pid_t pid = fork();
    if (pid == 0) _exit(child());
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "child %d of fork %d: status 0x%x\n", (int)pid, f, status);
      bad++;
    }
  }
  stop_threads();
  if (ptiFlushAllViews() != PTI_SUCCESS) bad++;
  if (!balanced("fork parent")) bad++;
  if (bad == 0) printf("fork_exit fork: ok (%d children, each %d calls seen in full)\n", FORKS, CHILD_CALLS);
  return bad != 0;
}

static int exiting;

/* Runs after libpti's exit hook (exit handlers run before the ELF destructors of the program). */
__attribute__((destructor)) static void after_exit_hook(void) {
  if (!exiting) return;
  stop_threads();
  int ok = balanced("exit") && atomic_load(&delivered_api) > 0;
  if (ok && write(1, "fork_exit exit: ok\n", 19) < 0) ok = 0;
  _exit(ok ? 0 : 1);
}

int main(int argc, char** argv) {
  if (argc == 2 && !strcmp(argv[1], "fork")) return fork_scenario();
  if (argc == 2 && !strcmp(argv[1], "exit")) {
    set_up();
    usleep(50 * 1000);
    exiting = 1;
    exit(0); /* no flush, threads running */
  }
  fprintf(stderr, "usage: fork_exit fork|exit\n");
  return 2;
}
