/* Four migrations of a buffer (commands of no record kind) and one write (a copy), on the OpenCL
 * platform whose name contains $PTI_TEST_PLATFORM. Prints "W DONE". */
#define CL_TARGET_OPENCL_VERSION 120
#include "cl_pick.h"

int main(void) {
    cl_device_id device = pick_device();
    cl_int err;
    cl_context context = context_on(device);
    cl_command_queue queue = queue_on(context, device);
    int data[256] = {0};
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CHECK(err);
    for (int i = 0; i < 4; i++)
        CHECK(clEnqueueMigrateMemObjects(queue, 1, &buffer, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    CHECK(clFinish(queue));
    CHECK(clReleaseMemObject(buffer));
    CHECK(clReleaseCommandQueue(queue));
    CHECK(clReleaseContext(context));
    printf("W DONE\n");
    return 0;
}
