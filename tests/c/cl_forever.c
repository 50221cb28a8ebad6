/* Runs a small kernel on the OpenCL platform whose name contains $PTI_TEST_PLATFORM, in a loop:
 * forever (the program a test kills mid-run), or as many times as its argument says, then
 * prints its peak resident memory ("W HWM <kB>", from /proc/self/status) and returns; or, with a
 * second argument "abort" or "_exit", waits half a second and ends that way instead (no exit
 * handler runs); with "exec" (and a third argument N, default 10), waits half a second and
 * replaces its image with itself running N launches (same process ID). Prints "W ITER <n>"
 * every 100 launches. */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include "cl_pick.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char *SOURCE =
    "__kernel void bump(__global int* v) { v[get_global_id(0)] += 1; }";

/* This process's peak resident set, in kB (VmHWM). */
static long peak_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kb;
}

int main(int argc, char **argv) {
    unsigned long limit = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
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
    for (unsigned long i = 1; limit == 0 || i <= limit; i++) {
        size_t global = 64;
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clFinish(queue));
        if (i % 100 == 0) {
            printf("W ITER %lu\n", i);
            fflush(stdout);
        }
    }
    CHECK(clFinish(queue));
    printf("W HWM %ld\n", peak_kb());
    fflush(stdout);
    if (argc > 2) {
        struct timespec half = {0, 500000000};
        nanosleep(&half, NULL);
        struct rlimit no_core = {0, 0}; /* a test's abort leaves no core file behind */
        setrlimit(RLIMIT_CORE, &no_core);
        if (strcmp(argv[2], "abort") == 0) abort();
        if (strcmp(argv[2], "_exit") == 0) _exit(3);
        if (strcmp(argv[2], "exec") == 0) {
            char *next[] = {argv[0], argc > 3 ? argv[3] : "10", NULL};
            execv(argv[0], next);
            perror("execv");
            return 1;
        }
    }
    return 0;
}
