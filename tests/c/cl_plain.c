/* The OpenCL workload alone: no libpti linked (it may still be loaded as a layer through
 * OPENCL_LAYERS). */
#include "cl_workload.h"

int main(void) { return cl_workload(); }
