/* A stand-in for an OpenCL loader without layer support (as CUDA's libOpenCL.so.1 is): it has
 * no OPENCL_LAYERS in it and finds no platform. Built as libOpenCL.so.1 for one test. */
#include <stdint.h>

int32_t clGetPlatformIDs(uint32_t num_entries, void** platforms, uint32_t* num_platforms) {
  (void)num_entries, (void)platforms;
  if (num_platforms) *num_platforms = 0;
  return -1001; /* CL_PLATFORM_NOT_FOUND_KHR */
}
