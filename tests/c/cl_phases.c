/* Two phases of kernels, for capture control: launches kernel `phase_a` N times (argv[1]),
 * prints "PHASE A DONE", then waits (argv[2]: "stdin" reads a line, a number sleeps that many
 * milliseconds), then launches kernel `phase_b` N times and prints "PHASE B DONE". The queue,
 * program and kernels are all made before phase A, so that a pause over phase A also covers
 * their creation. */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include "cl_pick.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

static const char *SOURCE =
    "__kernel void phase_a(__global int* v) { v[get_global_id(0)] += 1; }\n"
    "__kernel void phase_b(__global int* v) { v[get_global_id(0)] += 2; }\n";

static void run(cl_command_queue queue, cl_kernel kernel, unsigned long n) {
    for (unsigned long i = 0; i < n; i++) {
        size_t global = 64;
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    }
    CHECK(clFinish(queue));
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: cl_phases N stdin|MILLISECONDS\n");
        return 2;
    }
    unsigned long n = strtoul(argv[1], NULL, 10);
    cl_device_id device = pick_device();
    cl_int err;
    cl_context context = context_on(device);
    cl_command_queue queue = queue_on(context, device);
    cl_program program = built(context, device, SOURCE);
    cl_kernel a = clCreateKernel(program, "phase_a", &err);
    CHECK(err);
    cl_kernel b = clCreateKernel(program, "phase_b", &err);
    CHECK(err);
    int zeros[64] = {0};
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   sizeof zeros, zeros, &err);
    CHECK(err);
    CHECK(clSetKernelArg(a, 0, sizeof buffer, &buffer));
    CHECK(clSetKernelArg(b, 0, sizeof buffer, &buffer));

    run(queue, a, n);
    printf("PHASE A DONE\n");
    fflush(stdout);
    if (strcmp(argv[2], "stdin") == 0) {
        char line[64];
        if (!fgets(line, sizeof line, stdin)) {
            perror("cl_phases: reading stdin");
            return 3;
        }
    } else {
        long ms = strtol(argv[2], NULL, 10);
        struct timespec wait = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&wait, NULL);
    }
    run(queue, b, n);
    printf("PHASE B DONE\n");
    fflush(stdout);
    CHECK(clReleaseMemObject(buffer));
    CHECK(clReleaseKernel(a));
    CHECK(clReleaseKernel(b));
    CHECK(clReleaseProgram(program));
    CHECK(clReleaseCommandQueue(queue));
    CHECK(clReleaseContext(context));
    return 0;
}
