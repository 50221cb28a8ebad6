/* Which of the program's waits record which queue's commands (issue 39: libpti keeps OpenCL's
 * pending commands in shards by queue). Two in-order queues A and B on one device, the copy view
 * on, and after each step the commands libpti still holds without a record
 * (ptiViewGetPendingDeviceRecordCount), which must be 0:
 *   blocking  a copy on B, then a blocking read on B: the blocking call is the program's only
 *             wait for B, and B is in order, so the copy before it has completed too;
 *   finish    a copy on B and one on A, then clFinish(B) and clFinish(A);
 *   wait      a copy on B, then clWaitForEvents on its event.
 * Then a flush: every copy and read has its record.
 *
 * Prints "W <step> <pending>", "W copies <recorded> of <submitted>", then "W OK" or "W FAILED". */
#define CL_TARGET_OPENCL_VERSION 120
#include <stdint.h>

#include "cl_pick.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"
#include "count_copies.h"
#include "pti_okay.h"

/* Prints the commands still without a record after `step`; whether there are none. */
static int none_pending(const char* step) {
  uint64_t n = 99;
  OKAY(ptiViewGetPendingDeviceRecordCount(&n));
  printf("W %s %llu\n", step, (unsigned long long)n);
  return n == 0;
}

int main(void) {
  OKAY(ptiViewSetCallbacks(requested, completed));
  OKAY(ptiViewEnable(PTI_VIEW_DEVICE_GPU_MEM_COPY));
  cl_device_id device = pick_device();
  cl_context context = context_on(device);
  cl_command_queue a = queue_on(context, device), b = queue_on(context, device);
  static char host[4096];
  cl_int err;
  cl_mem x = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  CHECK(err);
  cl_mem y = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  CHECK(err);
  unsigned long long submitted = 0;
  int ok = 1;

  CHECK(clEnqueueCopyBuffer(b, x, y, 0, 0, sizeof host, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(b, y, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  submitted += 2;
  ok &= none_pending("blocking");

  CHECK(clEnqueueCopyBuffer(b, x, y, 0, 0, sizeof host, 0, NULL, NULL));
  CHECK(clEnqueueCopyBuffer(a, y, x, 0, 0, sizeof host, 0, NULL, NULL));
  submitted += 2;
  CHECK(clFinish(b));
  CHECK(clFinish(a));
  ok &= none_pending("finish");

  cl_event done;
  CHECK(clEnqueueCopyBuffer(b, x, y, 0, 0, sizeof host, 0, NULL, &done));
  submitted += 1;
  CHECK(clWaitForEvents(1, &done));
  CHECK(clReleaseEvent(done));
  ok &= none_pending("wait");

  OKAY(ptiFlushAllViews());
  printf("W copies %llu of %llu\n", recorded, submitted);
  ok &= recorded == submitted;
  puts(ok ? "W OK" : "W FAILED");
  CHECK(clReleaseMemObject(x));
  CHECK(clReleaseMemObject(y));
  CHECK(clReleaseCommandQueue(a));
  CHECK(clReleaseCommandQueue(b));
  CHECK(clReleaseContext(context));
  return ok ? 0 : 1;
}
