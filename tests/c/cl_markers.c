/* Two queues on one device of the OpenCL platform whose name contains $PTI_TEST_PLATFORM: the
 * first writes and reads a buffer; the second runs only markers and a barrier, then is released
 * before the program ends (its records arrive after the queue is gone). Prints "W DONE". */
#define CL_TARGET_OPENCL_VERSION 120
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

int main(void) {
    const char *want = getenv("PTI_TEST_PLATFORM");
    cl_platform_id platforms[16];
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(16, platforms, &n));
    cl_platform_id platform = NULL;
    for (cl_uint i = 0; i < n && !platform; i++) {
        char name[256] = {0};
        CHECK(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL));
        if (!want || strstr(name, want)) platform = platforms[i];
    }
    if (!platform) {
        fprintf(stderr, "no OpenCL platform named like %s\n", want ? want : "(any)");
        return 1;
    }
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue work = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err);
    cl_command_queue sync = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err);

    int data[256] = {0};
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(work, buffer, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));

    cl_event marker;
    CHECK(clEnqueueMarkerWithWaitList(sync, 0, NULL, &marker));
    CHECK(clEnqueueBarrierWithWaitList(sync, 1, &marker, NULL));
    CHECK(clEnqueueMarkerWithWaitList(sync, 0, NULL, NULL));
    CHECK(clFinish(sync));
    CHECK(clReleaseEvent(marker));
    CHECK(clReleaseCommandQueue(sync));

    CHECK(clEnqueueReadBuffer(work, buffer, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    CHECK(clReleaseMemObject(buffer));
    CHECK(clReleaseCommandQueue(work));
    CHECK(clReleaseContext(context));
    printf("W DONE\n");
    return 0;
}
