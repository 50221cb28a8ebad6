/* What timing a command with an event costs in the OpenCL runtime itself, without libpti: small
 * kernel launches (a clFinish every 64) on a queue without and with profiling, with no event, an
 * event released, an event whose END is read, and one whose four timestamps are read (what
 * libpti's device views do), events on one launch in 8, and a marker with an event after each
 * launch; with the time spent inside the enqueue calls apart from the whole. The reference for
 * the "views" rows of the overhead benchmarks.
 *
 * build: cc -std=c11 -O2 benches/cl_event_cost.c -o cl_event_cost -lOpenCL
 * run:   PTI_TEST_PLATFORM="NVIDIA CUDA" ./cl_event_cost 20000 */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 64

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static const char* MODES[] = {"no event", "event, released", "event, END read, released",
                              "event, 4 times read, released", "event on every 8th launch",
                              "marker with event after each"};
#define NMODES 6

/* Reads `reads` profiling timestamps of each of `count` events, then releases them. */
static void retire(cl_event* events, int count, int reads) {
  const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_END, CL_PROFILING_COMMAND_START,
                                     CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT};
  for (int j = 0; j < count; j++) {
    for (int r = 0; r < reads; r++) {
      cl_ulong v;
      clGetEventProfilingInfo(events[j], what[r], sizeof v, &v, NULL);
    }
    clReleaseEvent(events[j]);
  }
}

int main(int argc, char** argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 20000;
  const char* want = getenv("PTI_TEST_PLATFORM");
  cl_platform_id platforms[8], platform = NULL;
  cl_device_id device = NULL;
  cl_uint n = 0;
  clGetPlatformIDs(8, platforms, &n);
  for (cl_uint i = 0; i < n && !platform; i++) {
    char name[256] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
    if ((!want || strstr(name, want)) &&
        clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) == CL_SUCCESS)
      platform = platforms[i];
  }
  if (!platform) return 3;
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  const char* src = "__kernel void k(__global int* p) { p[get_global_id(0)] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (clBuildProgram(prog, 1, &device, NULL, NULL, NULL) != CL_SUCCESS) return 4;
  cl_kernel k = clCreateKernel(prog, "k", &err);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
  clSetKernelArg(k, 0, sizeof buf, &buf);
  size_t global = 1;
  for (int profiled = 0; profiled < 2; profiled++) {
    for (int mode = 0; mode < NMODES; mode++) {
      cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, profiled ? CL_QUEUE_PROFILING_ENABLE : 0, 0};
      cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, props, &err);
      cl_event events[2 * BATCH];
      int held = 0;
      double t0 = now_ns(), in_enqueue = 0;
      for (int i = 0; i < launches; i++) {
        int with_event = mode >= 1 && mode <= 3 ? 1 : mode == 4 ? i % 8 == 0 : 0;
        double e0 = now_ns();
        clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, with_event ? &events[held++] : NULL);
        if (mode == 5) clEnqueueMarkerWithWaitList(q, 0, NULL, &events[held++]);
        in_enqueue += now_ns() - e0;
        if (i % BATCH == BATCH - 1) {
          clFinish(q);
          retire(events, held, mode == 2 ? 1 : mode == 3 ? 4 : 0);
          held = 0;
        }
      }
      clFinish(q);
      retire(events, held, 0);
      printf("%s queue, %-30s %8.1f ns per launch, %8.1f of them in the enqueue calls\n",
             profiled ? "profiled  " : "unprofiled", MODES[mode], (now_ns() - t0) / launches, in_enqueue / launches);
      clReleaseCommandQueue(q);
    }
  }
  clReleaseMemObject(buf);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  return 0;
}
