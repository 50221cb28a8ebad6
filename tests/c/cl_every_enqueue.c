/* Every enqueue function of OpenCL that the runtime offers, called REPS times under a tool with
 * the driver-API view and every device view enabled, to check that each command a traced call
 * submits is accounted: recorded (a device record sharing the call's correlation ID) or counted
 * (ptiViewGetUnrecordedCommandCount). The platform is the first whose name contains
 * $PTI_TEST_PLATFORM.
 *
 * Prints, per function:
 *   "E <name> <api id> <commands submitted> <device records> <counted without record>"
 * or, when the runtime does not offer it: "U <name> <why>". Then "D <records dropped>" and
 * "P <device records pending>". Functions that need another API (OpenGL, Direct3D, DX9 media,
 * EGL, external memory) or an FPGA (global variables, host pipes) are not attempted: the test
 * lists them. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl_ext.h>

#include "cl_pick.h"
#include "pti/pti_driver_opencl_api_ids.h"

#include "every_command.h"

/* Whether $PTI_TEST_SKIP names the function: one the runtime offers but cannot run (PoCL 3.1
 * exits inside clEnqueueWaitForEvents, "unimplemented"). */
static int skipped(const char* name) {
  const char* skip = getenv("PTI_TEST_SKIP");
  if (!skip || !strstr(skip, name)) return 0;
  printf("U %s skipped: $PTI_TEST_SKIP names it\n", name);
  return 1;
}

/* note() for an OpenCL status. */
static int cl_note(const char* name, uint32_t id, cl_int err) {
  return note(name, id, err == CL_SUCCESS, err);
}

/* Calls `call` once and finishes the queue; false if it failed. */
#define ONCE(name, call)                                      \
  do {                                                        \
    if (cl_note(#name, name##_id, (call))) CHECK(clFinish(q));   \
  } while (0)

/* Calls `call` REPS times (stopping at the first failure) and finishes the queue each time. */
#define TRY(name, call)                                       \
  for (int rep_ = 0; rep_ < REPS; rep_++) {                   \
    if (!cl_note(#name, name##_id, (call))) break;               \
    CHECK(clFinish(q));                                       \
  }

static void native(void* args) { (void)args; }

static const char* SOURCE = "__kernel void twice(__global int* a) { a[get_global_id(0)] *= 2; }";

#define EXT(platform, type, name) ((type)clGetExtensionFunctionAddressForPlatform(platform, #name))

int main(void) {
  start_views();

  cl_device_id device = pick_device();
  cl_platform_id platform;
  CHECK(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL));
  cl_int err;
  cl_context ctx = context_on(device);
  cl_command_queue q = queue_on(ctx, device);
  cl_program program = built(ctx, device, SOURCE);
  cl_kernel k = clCreateKernel(program, "twice", &err);
  CHECK(err);

  enum { BYTES = 4096 };
  static int host[BYTES / sizeof(int)];
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BYTES, NULL, &err);
  CHECK(err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BYTES, NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof a, &a));
  size_t global = 64, origin[3] = {0, 0, 0}, rect[3] = {64, 4, 1};

  /* Buffers. */
  TRY(clEnqueueWriteBuffer, clEnqueueWriteBuffer(q, a, CL_TRUE, 0, BYTES, host, 0, NULL, NULL));
  TRY(clEnqueueReadBuffer, clEnqueueReadBuffer(q, a, CL_TRUE, 0, BYTES, host, 0, NULL, NULL));
  TRY(clEnqueueCopyBuffer, clEnqueueCopyBuffer(q, a, b, 0, 0, BYTES, 0, NULL, NULL));
  TRY(clEnqueueWriteBufferRect, clEnqueueWriteBufferRect(q, a, CL_TRUE, origin, origin, rect, 64, 0, 64, 0, host, 0, NULL, NULL));
  TRY(clEnqueueReadBufferRect, clEnqueueReadBufferRect(q, a, CL_TRUE, origin, origin, rect, 64, 0, 64, 0, host, 0, NULL, NULL));
  TRY(clEnqueueCopyBufferRect, clEnqueueCopyBufferRect(q, a, b, origin, origin, rect, 64, 0, 64, 0, 0, NULL, NULL));
  int pattern = 7;
  TRY(clEnqueueFillBuffer, clEnqueueFillBuffer(q, a, &pattern, sizeof pattern, 0, BYTES, 0, NULL, NULL));
  cl_mem migrate[1] = {a};
  TRY(clEnqueueMigrateMemObjects, clEnqueueMigrateMemObjects(q, 1, migrate, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
  for (int rep = 0; rep < REPS; rep++) {
    void* p = clEnqueueMapBuffer(q, a, CL_TRUE, CL_MAP_READ, 0, BYTES, 0, NULL, NULL, &err);
    if (!cl_note("clEnqueueMapBuffer", clEnqueueMapBuffer_id, err)) break;
    ONCE(clEnqueueUnmapMemObject, clEnqueueUnmapMemObject(q, a, p, 0, NULL, NULL));
  }

  /* Images, where the device has them. */
  cl_bool images = CL_FALSE;
  CHECK(clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
  if (images) {
    cl_image_format format = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 16, .image_height = 16};
    cl_mem i1 = clCreateImage(ctx, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    CHECK(err);
    cl_mem i2 = clCreateImage(ctx, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    CHECK(err);
    size_t region[3] = {16, 16, 1};
    cl_uint4 color = {{1, 2, 3, 4}};
    TRY(clEnqueueWriteImage, clEnqueueWriteImage(q, i1, CL_TRUE, origin, region, 0, 0, host, 0, NULL, NULL));
    TRY(clEnqueueReadImage, clEnqueueReadImage(q, i1, CL_TRUE, origin, region, 0, 0, host, 0, NULL, NULL));
    TRY(clEnqueueCopyImage, clEnqueueCopyImage(q, i1, i2, origin, origin, region, 0, NULL, NULL));
    TRY(clEnqueueCopyImageToBuffer, clEnqueueCopyImageToBuffer(q, i1, a, origin, region, 0, 0, NULL, NULL));
    TRY(clEnqueueCopyBufferToImage, clEnqueueCopyBufferToImage(q, a, i1, 0, origin, region, 0, NULL, NULL));
    TRY(clEnqueueFillImage, clEnqueueFillImage(q, i1, &color, origin, region, 0, NULL, NULL));
    for (int rep = 0; rep < REPS; rep++) {
      size_t row = 0, slice = 0;
      void* p = clEnqueueMapImage(q, i1, CL_TRUE, CL_MAP_READ, origin, region, &row, &slice, 0, NULL, NULL, &err);
      if (!cl_note("clEnqueueMapImage", clEnqueueMapImage_id, err)) break;
      ONCE(clEnqueueUnmapMemObject, clEnqueueUnmapMemObject(q, i1, p, 0, NULL, NULL));
    }
    CHECK(clReleaseMemObject(i1));
    CHECK(clReleaseMemObject(i2));
  } else {
    printf("U clEnqueue*Image the device has no images\n");
  }

  /* Kernels. */
  TRY(clEnqueueNDRangeKernel, clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
  TRY(clEnqueueTask, clEnqueueTask(q, k, 0, NULL, NULL));
  cl_device_exec_capabilities exec = 0;
  CHECK(clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof exec, &exec, NULL));
  if (exec & CL_EXEC_NATIVE_KERNEL) {
    int args = 0;
    TRY(clEnqueueNativeKernel, clEnqueueNativeKernel(q, native, &args, sizeof args, 0, NULL, NULL, 0, NULL, NULL));
  } else {
    printf("U clEnqueueNativeKernel the device runs no native kernels\n");
  }

  /* Markers, barriers, waits. */
  for (int rep = 0; rep < REPS; rep++) {
    cl_event marker;
    if (!cl_note("clEnqueueMarker", clEnqueueMarker_id, clEnqueueMarker(q, &marker))) break;
    if (!skipped("clEnqueueWaitForEvents")) ONCE(clEnqueueWaitForEvents, clEnqueueWaitForEvents(q, 1, &marker));
    CHECK(clReleaseEvent(marker));
  }
  TRY(clEnqueueBarrier, clEnqueueBarrier(q));
  TRY(clEnqueueMarkerWithWaitList, clEnqueueMarkerWithWaitList(q, 0, NULL, NULL));
  TRY(clEnqueueBarrierWithWaitList, clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));

  /* Shared virtual memory (OpenCL 2.0), where the device has it. */
  cl_device_svm_capabilities svm = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL) == CL_SUCCESS && svm) {
    void* s1 = clSVMAlloc(ctx, CL_MEM_READ_WRITE, BYTES, 0);
    void* s2 = clSVMAlloc(ctx, CL_MEM_READ_WRITE, BYTES, 0);
    if (s1 && s2) {
      const void* ptrs[1] = {s1};
      TRY(clEnqueueSVMMemcpy, clEnqueueSVMMemcpy(q, CL_TRUE, s2, s1, BYTES, 0, NULL, NULL));
      TRY(clEnqueueSVMMemFill, clEnqueueSVMMemFill(q, s1, &pattern, sizeof pattern, BYTES, 0, NULL, NULL));
      for (int rep = 0; rep < REPS; rep++) {
        if (!cl_note("clEnqueueSVMMap", clEnqueueSVMMap_id, clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, s1, BYTES, 0, NULL, NULL))) break;
        ONCE(clEnqueueSVMUnmap, clEnqueueSVMUnmap(q, s1, 0, NULL, NULL));
      }
      TRY(clEnqueueSVMMigrateMem, clEnqueueSVMMigrateMem(q, 1, ptrs, NULL, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
      for (int rep = 0; rep < REPS; rep++) {
        void* s = clSVMAlloc(ctx, CL_MEM_READ_WRITE, BYTES, 0);
        void* frees[1] = {s};
        if (!s || !cl_note("clEnqueueSVMFree", clEnqueueSVMFree_id, clEnqueueSVMFree(q, 1, frees, NULL, NULL, 0, NULL, NULL))) break;
        CHECK(clFinish(q));
      }
    } else {
      printf("U clEnqueueSVM* clSVMAlloc gave no memory\n");
    }
    if (s1) clSVMFree(ctx, s1);
    if (s2) clSVMFree(ctx, s2);
  } else {
    printf("U clEnqueueSVM* the device has no SVM\n");
  }

  /* Intel's unified shared memory, where the platform has it. */
  clSharedMemAllocINTEL_fn shared_alloc = EXT(platform, clSharedMemAllocINTEL_fn, clSharedMemAllocINTEL);
  clMemBlockingFreeINTEL_fn usm_free = EXT(platform, clMemBlockingFreeINTEL_fn, clMemBlockingFreeINTEL);
  void* u1 = shared_alloc ? shared_alloc(ctx, device, NULL, BYTES, 0, &err) : NULL;
  void* u2 = shared_alloc ? shared_alloc(ctx, device, NULL, BYTES, 0, &err) : NULL;
  if (u1 && u2 && usm_free) {
    clEnqueueMemcpyINTEL_fn memcpy_ = EXT(platform, clEnqueueMemcpyINTEL_fn, clEnqueueMemcpyINTEL);
    clEnqueueMemFillINTEL_fn fill = EXT(platform, clEnqueueMemFillINTEL_fn, clEnqueueMemFillINTEL);
    clEnqueueMigrateMemINTEL_fn migrate_usm = EXT(platform, clEnqueueMigrateMemINTEL_fn, clEnqueueMigrateMemINTEL);
    clEnqueueMemAdviseINTEL_fn advise = EXT(platform, clEnqueueMemAdviseINTEL_fn, clEnqueueMemAdviseINTEL);
    if (memcpy_) TRY(clEnqueueMemcpyINTEL, memcpy_(q, CL_TRUE, u2, u1, BYTES, 0, NULL, NULL));
    if (fill) TRY(clEnqueueMemFillINTEL, fill(q, u1, &pattern, sizeof pattern, BYTES, 0, NULL, NULL));
    clEnqueueMemsetINTEL_fn memset_ = EXT(platform, clEnqueueMemsetINTEL_fn, clEnqueueMemsetINTEL);
    if (memset_) TRY(clEnqueueMemsetINTEL, memset_(q, u1, 0, BYTES, 0, NULL, NULL));
    /* Intel's CPU runtime refuses to migrate an allocation to the host twice: a fresh one each time. */
    for (int rep = 0; migrate_usm && rep < REPS; rep++) {
      void* m = shared_alloc(ctx, device, NULL, BYTES, 0, &err);
      CHECK(err);
      ONCE(clEnqueueMigrateMemINTEL, migrate_usm(q, m, BYTES, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
      usm_free(ctx, m);
    }
    if (advise) TRY(clEnqueueMemAdviseINTEL, advise(q, u1, BYTES, 1, 0, NULL, NULL));
    usm_free(ctx, u1);
    usm_free(ctx, u2);
  } else {
    printf("U clEnqueue*INTEL the platform has no unified shared memory\n");
  }

  /* Command buffers (cl_khr_command_buffer), where the platform has them. */
  clCreateCommandBufferKHR_fn create_cb = EXT(platform, clCreateCommandBufferKHR_fn, clCreateCommandBufferKHR);
  clCommandNDRangeKernelKHR_fn record = EXT(platform, clCommandNDRangeKernelKHR_fn, clCommandNDRangeKernelKHR);
  clFinalizeCommandBufferKHR_fn finalize = EXT(platform, clFinalizeCommandBufferKHR_fn, clFinalizeCommandBufferKHR);
  clEnqueueCommandBufferKHR_fn run_cb = EXT(platform, clEnqueueCommandBufferKHR_fn, clEnqueueCommandBufferKHR);
  clReleaseCommandBufferKHR_fn release_cb = EXT(platform, clReleaseCommandBufferKHR_fn, clReleaseCommandBufferKHR);
  cl_command_buffer_khr cb = create_cb ? create_cb(1, &q, NULL, &err) : NULL;
  if (cb && record && finalize && run_cb && release_cb) {
    CHECK(record(cb, NULL, NULL, k, 1, NULL, &global, NULL, 0, NULL, NULL, NULL));
    CHECK(finalize(cb));
    TRY(clEnqueueCommandBufferKHR, run_cb(0, NULL, cb, 0, NULL, NULL));
    CHECK(release_cb(cb));
  } else {
    printf("U clEnqueueCommandBufferKHR the platform has no command buffers\n");
  }
  if (!EXT(platform, void*, clEnqueueWaitSemaphoresKHR)) printf("U clEnqueue*SemaphoresKHR the platform has no semaphores\n");

  CHECK(clFinish(q));
  OKAY(ptiFlushAllViews());

  report(PTI_API_GROUP_OPENCL);

  CHECK(clReleaseMemObject(a));
  CHECK(clReleaseMemObject(b));
  CHECK(clReleaseKernel(k));
  CHECK(clReleaseProgram(program));
  CHECK(clReleaseCommandQueue(q));
  CHECK(clReleaseContext(ctx));
  return 0;
}
