/* A tool written for Intel PTI 1.x's view API alone, to compare what Intel's library and libpti
 * record of one program. Preloaded into the program, its constructor enables the API and device
 * views; at exit it flushes and writes one line per record ("T ...") to $PTI_TEST_OUT.<pid>.
 *
 * It is built against libpti's Intel-compatible headers, calls the plain C names and links against
 * libpti_view.so.1, Intel's library name: the same binary runs on Intel PTI 1.2 (PyPI intel-pti)
 * and on libpti (through a libpti_view.so.1 link to libpti.so), whichever LD_LIBRARY_PATH finds.
 * Being linked (not merely preloaded beside it) also orders the constructors: the library's runs
 * before this one, which Intel's needs. */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pti/pti_view.h"

static FILE* out;
static int failures;

/* With $PTI_TEST_STARVE set, lends nothing: every record is lost. */
static void requested(unsigned char** buffer, size_t* size) {
  if (getenv("PTI_TEST_STARVE")) {
    *buffer = NULL;
    *size = 0;
    return;
  }
  *size = 1 << 20;
  *buffer = malloc(*size);
}

static const char* api_name(pti_api_group_id group, uint32_t id) {
  const char* name = NULL;
  return ptiViewGetApiIdName(group, id, &name) == PTI_SUCCESS && name ? name : "?";
}

static void write_record(const pti_view_record_base* r) {
  switch (r->_view_kind) {
    case PTI_VIEW_DRIVER_API:
    case PTI_VIEW_RUNTIME_API: {
      const pti_view_record_api* a = (const void*)r;
      fprintf(out, "T %s %s %u %u\n", r->_view_kind == PTI_VIEW_RUNTIME_API ? "RUNTIME" : "DRIVER",
              api_name(a->_api_group, a->_api_id), a->_api_id, a->_correlation_id);
      break;
    }
    case PTI_VIEW_DEVICE_GPU_KERNEL:
    case PTI_VIEW_DEVICE_CPU_KERNEL: {
      const pti_view_record_kernel* k = (const void*)r;
      fprintf(out, "T KERNEL %s %u\n", k->_name, k->_correlation_id);
      fprintf(out, "T TIME %llu %llu\n", (unsigned long long)k->_start_timestamp,
              (unsigned long long)k->_end_timestamp);
      break;
    }
    case PTI_VIEW_DEVICE_GPU_MEM_COPY: {
      const pti_view_record_memory_copy* c = (const void*)r;
      fprintf(out, "T COPY %s/%llu %u\n", ptiViewMemcpyTypeToString(c->_memcpy_type),
              (unsigned long long)c->_bytes, c->_correlation_id);
      fprintf(out, "T TIME %llu %llu\n", (unsigned long long)c->_start_timestamp,
              (unsigned long long)c->_end_timestamp);
      break;
    }
    case PTI_VIEW_DEVICE_GPU_MEM_FILL: {
      const pti_view_record_memory_fill* f = (const void*)r;
      fprintf(out, "T FILL %llu %u\n", (unsigned long long)f->_bytes, f->_correlation_id);
      fprintf(out, "T TIME %llu %llu\n", (unsigned long long)f->_start_timestamp,
              (unsigned long long)f->_end_timestamp);
      break;
    }
    case PTI_VIEW_COLLECTION_OVERHEAD: {
      const pti_view_record_overhead* o = (const void*)r;
      fprintf(out, "T OVERHEAD %s %llu %u\n", ptiViewOverheadKindToString(o->_overhead_kind),
              (unsigned long long)o->_overhead_count, o->_api_id);
      break;
    }
    default:
      fprintf(out, "T OTHER %u\n", (unsigned)r->_view_kind);
  }
}

static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (out && ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) write_record(r);
  free(buffer);
}

static const pti_view_kind views[] = {PTI_VIEW_RUNTIME_API,         PTI_VIEW_DRIVER_API,
                                      PTI_VIEW_DEVICE_GPU_KERNEL,   PTI_VIEW_DEVICE_GPU_MEM_COPY,
                                      PTI_VIEW_DEVICE_GPU_MEM_FILL, PTI_VIEW_COLLECTION_OVERHEAD};

static void finish(void) {
  pti_result flushed = ptiFlushAllViews();
  if (flushed != PTI_SUCCESS) {
    if (out) fprintf(out, "T FLUSH %s\n", ptiResultTypeToString(flushed));
    failures++;
  }
  if (out) {
    fprintf(out, "T FAILURES %d\n", failures);
    fclose(out);
    out = NULL;
  }
  /* $PTI_TEST_QUICK_EXIT (set for Intel PTI's runs): end here, the records written, before the
   * libraries' destructors. Intel PTI 1.2's deadlock when it still tracks commands whose
   * completion it never saw (ZeCollector's destructor releases their event views under a mutex
   * it already holds), which an asynchronous device leaves at exit. The programs run here exit
   * with 0 (the tests require it). */
  if (getenv("PTI_TEST_QUICK_EXIT")) {
    fflush(stdout);
    fflush(stderr);
    _exit(0);
  }
}

__attribute__((constructor)) static void start(void) {
  const char* base = getenv("PTI_TEST_OUT");
  char path[4096];
  snprintf(path, sizeof path, "%s.%ld", base ? base : "/tmp/view_tool", (long)getpid());
  out = fopen(path, "w");
  if (!out) abort();
  if (ptiViewSetCallbacks(requested, completed) != PTI_SUCCESS) failures++;
  fprintf(out, "T NOW %llu\n", (unsigned long long)ptiViewGetTimestamp());
  fprintf(out, "T VERSION %s\n", ptiVersionString());
  /* Kernels on CPU devices (PoCL, Intel's CPU runtime): where the library records them. With
   * $PTI_TEST_GPU_KERNELS_ONLY, the GPU kernel view alone (what a GPU profiler enables). */
  if (getenv("PTI_TEST_GPU_KERNELS_ONLY")) {
    fprintf(out, "T CPU_KERNEL_VIEW NOT_ENABLED\n");
  } else {
    pti_result cpu = ptiViewEnable(PTI_VIEW_DEVICE_CPU_KERNEL);
    fprintf(out, "T CPU_KERNEL_VIEW %s\n", ptiResultTypeToString(cpu));
  }
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) {
    pti_result r = ptiViewEnable(views[i]);
    if (r != PTI_SUCCESS) {
      fprintf(out, "T ENABLE %u %s\n", (unsigned)views[i], ptiResultTypeToString(r));
      failures++;
    }
  }
  atexit(finish);
}
