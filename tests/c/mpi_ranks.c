/* An MPI program whose ranks each run OpenCL kernels on the platform named like
 * $PTI_TEST_PLATFORM: rank r launches kernel `bump` (r + 1) * N times (N = argv[1], default 4),
 * so that a merged trace can tell the ranks apart by their counts; then every rank joins one
 * MPI_Allreduce of its count, and rank 0 prints "MPI TOTAL <sum>". */
#define CL_TARGET_OPENCL_VERSION 120
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "cl_pick.h"

static const char *SOURCE = "__kernel void bump(__global int* v) { v[get_global_id(0)] += 1; }";

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
    long launches = (rank + 1) * n;

    cl_device_id device = pick_device();
    cl_int err;
    cl_context context = context_on(device);
    cl_command_queue queue = queue_on(context, device);
    cl_program program = built(context, device, SOURCE);
    cl_kernel kernel = clCreateKernel(program, "bump", &err);
    CHECK(err);
    int zeros[64] = {0};
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   sizeof zeros, zeros, &err);
    CHECK(err);
    CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
    for (long i = 0; i < launches; i++) {
        size_t global = 64;
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    }
    CHECK(clFinish(queue));

    long total = 0;
    MPI_Allreduce(&launches, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("MPI TOTAL %ld of %d ranks\n", total, size);

    CHECK(clReleaseMemObject(buffer));
    CHECK(clReleaseKernel(kernel));
    CHECK(clReleaseProgram(program));
    CHECK(clReleaseCommandQueue(queue));
    CHECK(clReleaseContext(context));
    MPI_Finalize();
    return 0;
}
