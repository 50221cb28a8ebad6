/* A view-API tool on Intel's PTI 1.2, in the same process as a tool on libpti (tests/c/ze_gpu.c
 * built with -DINTEL_BESIDE): two tracers of the Level Zero loader's tracing layer, each timing
 * the program's commands its own way (Intel's swaps the program's events for its own and signals
 * the program's afterwards; libpti never does).
 *
 * This file calls the view API by its plain C names, which resolve to Intel's libpti_view.so.1
 * (linked before libpti.so); the libpti tool calls libpti's through its libpti_ symbols
 * (PTI_LIBPTI_SYMBOLS). It prints Intel's device records ("I REC <KIND> <name> <correlation>")
 * and the records it could not take ("I FAILURES <n>"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pti/pti_view.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int failures;

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
      case PTI_VIEW_DEVICE_GPU_KERNEL: {
        pti_view_record_kernel* k = (void*)r;
        printf("I REC KERNEL %s %u\n", k->_name, k->_correlation_id);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_COPY: {
        pti_view_record_memory_copy* c = (void*)r;
        printf("I REC COPY - %u\n", c->_correlation_id);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_FILL: {
        pti_view_record_memory_fill* f = (void*)r;
        printf("I REC FILL - %u\n", f->_correlation_id);
        break;
      }
      default:
        break;
    }
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

static const pti_view_kind views[] = {PTI_VIEW_DEVICE_GPU_KERNEL, PTI_VIEW_DEVICE_GPU_MEM_COPY,
                                      PTI_VIEW_DEVICE_GPU_MEM_FILL};

/* Counts a call that failed, and says which. */
static void check(const char* what, pti_result r) {
  if (r == PTI_SUCCESS) return;
  failures++;
  printf("I FAILED %s %s\n", what, ptiResultTypeToString(r));
}

void intel_beside_start(void) {
  check("ptiViewSetCallbacks", ptiViewSetCallbacks(requested, completed));
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) check("ptiViewEnable", ptiViewEnable(views[i]));
  printf("I VERSION %s\n", ptiVersionString());
}

void intel_beside_finish(void) {
  check("ptiFlushAllViews", ptiFlushAllViews());
  printf("I FAILURES %d\n", failures);
  fflush(stdout);
}
