/* What the small OpenCL test programs share: CHECK (exit with the failing call and its status),
 * the first device of the platform whose name contains $PTI_TEST_PLATFORM (any platform when
 * unset), and the context, queue and program most of them start with. */
#ifndef PTI_TEST_CL_PICK_H
#define PTI_TEST_CL_PICK_H

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cl_int err_ = (call);                                                        \
        if (err_ != CL_SUCCESS) {                                                    \
            fprintf(stderr, "%s failed: %d\n", #call, err_);                         \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/* The first device of the chosen platform; exits when there is none. */
static cl_device_id pick_device(void) {
    const char *want = getenv("PTI_TEST_PLATFORM");
    cl_platform_id platforms[16];
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(16, platforms, &n));
    for (cl_uint i = 0; i < n; i++) {
        char name[256] = {0};
        CHECK(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL));
        if (!want || strstr(name, want)) {
            cl_device_id device;
            CHECK(clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL));
            return device;
        }
    }
    fprintf(stderr, "no OpenCL platform named like %s\n", want ? want : "(any)");
    exit(1);
}

/* A context on `device`; exits on an error. */
static inline cl_context context_on(cl_device_id device) {
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    return context;
}

/* An in-order queue of `device` in `context`, without properties; exits on an error. */
static inline cl_command_queue queue_on(cl_context context, cl_device_id device) {
    cl_int err;
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err);
    return queue;
}

/* `source` built for `device` in `context`; exits on an error, with the runtime's build log. */
static inline cl_program built(cl_context context, cl_device_id device, const char *source) {
    cl_int err;
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    CHECK(err);
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = {0};
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "clBuildProgram failed: %d; build log:\n%s\n", err, log);
    }
    CHECK(err);
    return program;
}

#endif
