// The CUPTI reference for the overhead benchmark (issue #8): the same two loops as
// benches/cl_loop.c (empty kernels with a synchronisation every 1024; blocking 1 MiB copies), in CUDA, with CUPTI set up in-process as argv[1] says:
//   none       no CUPTI;
//   callbacks  cuptiSubscribe with an empty callback (it only counts) on the runtime and driver
//              API domains;
//   activity   activity records of kernels, runtime calls, copies and memsets, with buffers that
//              are walked and freed;
//   both       callbacks and activity together.
//
// usage: cuda_loop <mode> launch|copy <timed iterations> [warm-up iterations]
// Prints "RESULT <ns per iteration> maxrss_kib <peak resident set>" on stdout and
// "BENCH_TOOL calls <n> records <n> dropped <n>" on stderr, like cl_loop under bench_tool.
//
// build: nvcc -O2 -arch=native -I$CUPTI/include benches/cuda_loop.cu -o cuda_loop \
//          -L$CUPTI/lib64 -Xlinker -rpath -Xlinker $CUPTI/lib64 -lcupti
#include <cuda_runtime.h>
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define COPY_BYTES (1u << 20)
#define SYNC_EVERY 1024
#define BUFFER_BYTES (1u << 20)

static uint64_t calls, records;

#define CUDA(call)                                                                  \
  do {                                                                              \
    cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "cuda_loop: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      exit(2);                                                                      \
    }                                                                               \
  } while (0)

#define CUPTI(call)                                                        \
  do {                                                                     \
    CUptiResult e_ = (call);                                               \
    if (e_ != CUPTI_SUCCESS) {                                             \
      const char* s_ = "?";                                                \
      cuptiGetResultString(e_, &s_);                                       \
      fprintf(stderr, "cuda_loop: %s failed: %s\n", #call, s_);            \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

__global__ void empty() {}

static double now_ns() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void CUPTIAPI on_call(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
}

static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, BUFFER_BYTES));
  *size = *buffer ? BUFFER_BYTES : 0;
  *max_records = 0;
}

static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t used) {
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(buffer, used, &r) == CUPTI_SUCCESS)
    __atomic_fetch_add(&records, 1, __ATOMIC_RELAXED);
  free(buffer);
}

static void run(bool launch, int n, void* device, const void* host) {
  for (int i = 0; i < n; i++) {
    if (launch) {
      empty<<<1, 1>>>();
      if (i % SYNC_EVERY == SYNC_EVERY - 1) CUDA(cudaDeviceSynchronize());
    } else
      CUDA(cudaMemcpy(device, host, COPY_BYTES, cudaMemcpyHostToDevice));
  }
  CUDA(cudaDeviceSynchronize());
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: cuda_loop none|callbacks|activity|both launch|copy <iterations> [warm-up]\n");
    return 2;
  }
  const char* mode = argv[1];
  bool launch = !strcmp(argv[2], "launch");
  int n = atoi(argv[3]), warm = argc > 4 ? atoi(argv[4]) : n / 10;
  bool want_callbacks = !strcmp(mode, "callbacks") || !strcmp(mode, "both");
  bool want_activity = !strcmp(mode, "activity") || !strcmp(mode, "both");
  if (!want_callbacks && !want_activity && strcmp(mode, "none")) {
    fprintf(stderr, "cuda_loop: unknown mode %s\n", mode);
    return 2;
  }
  if (want_callbacks) {
    CUpti_SubscriberHandle sub;
    CUPTI(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_call, nullptr));
    CUPTI(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
    CUPTI(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
  }
  if (want_activity) {
    CUPTI(cuptiActivityRegisterCallbacks(requested, completed));
    CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
  }
  void* device = nullptr;
  CUDA(cudaMalloc(&device, COPY_BYTES));
  void* host = calloc(1, COPY_BYTES);

  run(launch, warm, device, host);
  double t0 = now_ns();
  run(launch, n, device, host);
  double per = (now_ns() - t0) / n;

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("RESULT %.1f maxrss_kib %ld\n", per, ru.ru_maxrss);
  fflush(stdout);

  size_t dropped = 0;
  if (want_activity) {
    CUPTI(cuptiActivityFlushAll(1));
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  }
  fprintf(stderr, "BENCH_TOOL calls %llu records %llu dropped %llu\n", (unsigned long long)calls,
          (unsigned long long)records, (unsigned long long)dropped);
  free(host);
  CUDA(cudaFree(device));
  return 0;
}
