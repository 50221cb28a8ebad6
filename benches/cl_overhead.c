/* What libpti's OpenCL layer costs the program, per call, in one of four modes (argv[1]):
 *   off        libpti is loaded but its layer is not (run with PTI_OPENCL_LAYER=0);
 *   layer      the layer is active, no tool listens (every call passes one relaxed load);
 *   callbacks  a tool receives ENTER/EXIT for every OpenCL call (an empty callback);
 *   views      a tool records every call and every command (API, kernel, copy, sync views).
 * Three loops: a pure API call (clGetPlatformInfo), small kernel launches (with a clFinish
 * every 64), and small blocking writes. Prints "RESULT <mode> getinfo <ns> launch <ns> write <ns>"
 * (per call, wall time). Run by benches/opencl_overhead.py, which interleaves the modes. */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pti/pti_callback.h"
#include "pti/pti_view.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void on_call(void* u, pti_callback_domain d, pti_api_group_id g, uint32_t id, void* data) {
  (void)u, (void)d, (void)g, (void)id, (void)data;
}

static void requested(unsigned char** buffer, size_t* size) {
  *size = 4 << 20;
  *buffer = malloc(*size);
}
static size_t records;
static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) records++;
  free(buffer);
}

#define CHECK(call)                                            \
  do {                                                         \
    cl_int e_ = (call);                                        \
    if (e_ != CL_SUCCESS) {                                    \
      fprintf(stderr, "%s failed: %d\n", #call, e_);           \
      exit(2);                                                 \
    }                                                          \
  } while (0)

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "layer";
  int getinfo_n = argc > 2 ? atoi(argv[2]) : 200000, launch_n = argc > 3 ? atoi(argv[3]) : 20000;
  if (!strcmp(mode, "callbacks")) {
    pti_callback_subscriber sub;
    if (ptiCallbackSubscribe(&sub, on_call, NULL) || ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_DRIVER_API)) return 2;
  } else if (!strcmp(mode, "views")) {
    pti_view_kind kinds[] = {PTI_VIEW_DRIVER_API, PTI_VIEW_DEVICE_GPU_KERNEL, PTI_VIEW_DEVICE_CPU_KERNEL,
                             PTI_VIEW_DEVICE_GPU_MEM_COPY, PTI_VIEW_DEVICE_SYNCHRONIZATION};
    if (ptiViewSetCallbacks(requested, completed)) return 2;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
      if (ptiViewEnable(kinds[i])) return 2;
  }
  const char* want = getenv("PTI_TEST_PLATFORM");
  cl_platform_id platforms[8], platform = NULL;
  cl_uint n = 0;
  CHECK(clGetPlatformIDs(8, platforms, &n));
  cl_device_id device = NULL;
  for (cl_uint i = 0; i < n && !platform; i++) {
    char name[256] = {0};
    CHECK(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL));
    if ((!want || strstr(name, want)) &&
        clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) == CL_SUCCESS)
      platform = platforms[i];
  }
  if (!platform) return 3;
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
  const char* src = "__kernel void k(__global int* p) { p[get_global_id(0)] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(prog, "k", &err);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
  CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
  int host[16] = {0};
  size_t global = 1, size = 0;

  /* Warm up every path once. */
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  CHECK(clFinish(q));

  double t0 = now_ns();
  for (int i = 0; i < getinfo_n; i++) CHECK(clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, NULL, &size));
  double t1 = now_ns();
  for (int i = 0; i < launch_n; i++) {
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    if (i % 64 == 63) CHECK(clFinish(q));
  }
  CHECK(clFinish(q));
  double t2 = now_ns();
  int write_n = launch_n / 4;
  for (int i = 0; i < write_n; i++)
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  double t3 = now_ns();
  if (!strcmp(mode, "views") && ptiFlushAllViews()) return 4;
  printf("RESULT %s getinfo %.1f launch %.1f write %.1f records %zu\n", mode, (t1 - t0) / getinfo_n,
         (t2 - t1) / launch_n, (t3 - t2) / write_n, records);
  clReleaseMemObject(buf);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return 0;
}
