/* The samples' OpenCL workload (see workload.h). */
#define CL_TARGET_OPENCL_VERSION 300
#include "workload.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)

static const char* source =
    "__kernel void vector_add(__global const float* a, __global const float* b, __global float* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void scale(__global float* c, float k) {\n"
    "  c[get_global_id(0)] *= k;\n"
    "}\n";

#define TRY(call)                                                       \
  do {                                                                  \
    cl_int e_ = (call);                                                 \
    if (e_ != CL_SUCCESS) {                                             \
      fprintf(stderr, "workload: %s failed: %d\n", #call, (int)e_);     \
      return 1;                                                         \
    }                                                                   \
  } while (0)

/* The first GPU of any platform, else the first device of any kind. */
static int pick_device(cl_device_id* device) {
  cl_platform_id platforms[16];
  cl_uint n = 0;
  TRY(clGetPlatformIDs(16, platforms, &n));
  if (n > 16) n = 16; /* n counts every platform; only 16 were written */
  for (int want_gpu = 1; want_gpu >= 0; --want_gpu) {
    for (cl_uint i = 0; i < n; ++i) {
      cl_device_type type = want_gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
      if (clGetDeviceIDs(platforms[i], type, 1, device, NULL) == CL_SUCCESS) return 0;
    }
  }
  fprintf(stderr, "workload: no OpenCL device found\n");
  return 1;
}

int run_workload(int rounds, int verbose) {
  cl_device_id device;
  if (pick_device(&device)) return 1;
  char name[256] = {0};
  TRY(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, NULL));
  if (verbose) printf("device: %s\n", name);
  cl_int err;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  TRY(err);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
  TRY(err);
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  TRY(err);
  TRY(clBuildProgram(program, 1, &device, "", NULL, NULL));
  cl_kernel add = clCreateKernel(program, "vector_add", &err);
  TRY(err);
  cl_kernel scale = clCreateKernel(program, "scale", &err);
  TRY(err);
  float* host = malloc(N * sizeof(float));
  for (int i = 0; i < N; ++i) host[i] = (float)(i % 1000);
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_ONLY, N * sizeof(float), NULL, &err);
  TRY(err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_ONLY, N * sizeof(float), NULL, &err);
  TRY(err);
  cl_mem c = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
  TRY(err);
  double sum = 0;
  for (int r = 0; r < rounds; ++r) {
    const float half = 0.5f, one = 1.0f;
    TRY(clEnqueueWriteBuffer(queue, a, CL_FALSE, 0, N * sizeof(float), host, 0, NULL, NULL));
    TRY(clEnqueueFillBuffer(queue, b, &one, sizeof one, 0, N * sizeof(float), 0, NULL, NULL));
    TRY(clSetKernelArg(add, 0, sizeof a, &a));
    TRY(clSetKernelArg(add, 1, sizeof b, &b));
    TRY(clSetKernelArg(add, 2, sizeof c, &c));
    size_t global = N;
    TRY(clEnqueueNDRangeKernel(queue, add, 1, NULL, &global, NULL, 0, NULL, NULL));
    TRY(clSetKernelArg(scale, 0, sizeof c, &c));
    TRY(clSetKernelArg(scale, 1, sizeof half, &half));
    TRY(clEnqueueNDRangeKernel(queue, scale, 1, NULL, &global, NULL, 0, NULL, NULL));
    TRY(clEnqueueReadBuffer(queue, c, CL_TRUE, 0, N * sizeof(float), host, 0, NULL, NULL));
    sum = 0;
    for (int i = 0; i < N; ++i) sum += host[i];
    for (int i = 0; i < N; ++i) host[i] = (float)(i % 1000);
  }
  TRY(clFinish(queue));
  if (verbose) printf("result: %.1f\n", sum);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseMemObject(c);
  clReleaseKernel(add);
  clReleaseKernel(scale);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  free(host);
  return 0;
}
