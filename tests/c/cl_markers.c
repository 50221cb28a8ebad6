/* Two queues on one device of the OpenCL platform whose name contains $PTI_TEST_PLATFORM: the
 * first writes and reads a buffer; the second runs only markers and a barrier, then is released
 * before the program ends (its records arrive after the queue is gone). Prints "W DONE". */
#define CL_TARGET_OPENCL_VERSION 120
#include "cl_pick.h"

int main(void) {
    cl_device_id device = pick_device();
    cl_int err;
    cl_context context = context_on(device);
    cl_command_queue work = queue_on(context, device);
    cl_command_queue sync = queue_on(context, device);

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
