/* When libpti's harvester thread (PTI_HARVEST=thread) is asked to run: only when a wait leaves
 * commands to harvest. One in-order queue, the copy view on:
 *   blocking  16 blocking reads and nothing else: each call records its own command when it
 *             returns, so no command is ever pending and the thread is never needed;
 *   finish    a copy left pending, then clFinish: the thread is asked to harvest it.
 * After each step, whether a thread named "pti-harvester" exists in this process. Then a flush:
 * every read and copy has its record.
 *
 * Prints "W <step> harvester <0|1>", "W copies <recorded> of <submitted>", then "W OK". */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#define CL_TARGET_OPENCL_VERSION 120
#include <dirent.h>
#include <time.h>

#include "cl_pick.h"
#include "pti/pti_view.h"
#include "count_copies.h"
#include "pti_okay.h"

/* Whether a thread of this process is named "pti-harvester". */
static int harvester_exists(void) {
  int found = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) {
    perror("/proc/self/task");
    exit(1);
  }
  for (struct dirent* t; (t = readdir(tasks)) != NULL;) {
    if (t->d_name[0] == '.') continue;
    char path[300], name[32] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", t->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue; /* the thread exited meanwhile */
    if (fgets(name, sizeof name, f) && strcmp(name, "pti-harvester\n") == 0) found = 1;
    fclose(f);
  }
  closedir(tasks);
  return found;
}

/* Prints whether the harvester thread exists after `step`, looking every 10 ms, `ticks` times at
 * most, until it does: a new thread names itself only once it runs. */
static void harvester_after(const char* step, int ticks) {
  const struct timespec tick = {0, 10 * 1000 * 1000};
  int found = 0;
  for (int i = 0; i < ticks && !found; i++) {
    nanosleep(&tick, NULL);
    found = harvester_exists();
  }
  printf("W %s harvester %d\n", step, found);
}

int main(void) {
  OKAY(ptiViewSetCallbacks(requested, completed));
  OKAY(ptiViewEnable(PTI_VIEW_DEVICE_GPU_MEM_COPY));
  cl_device_id device = pick_device();
  cl_context context = context_on(device);
  cl_command_queue q = queue_on(context, device);
  static char host[4096];
  cl_int err;
  cl_mem x = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  CHECK(err);
  cl_mem y = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  CHECK(err);
  unsigned long long submitted = 0;

  for (int i = 0; i < 16; i++, submitted++)
    CHECK(clEnqueueReadBuffer(q, x, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  harvester_after("blocking", 20);

  CHECK(clEnqueueCopyBuffer(q, x, y, 0, 0, sizeof host, 0, NULL, NULL));
  submitted++;
  CHECK(clFinish(q));
  harvester_after("finish", 500);

  OKAY(ptiFlushAllViews());
  printf("W copies %llu of %llu\n", recorded, submitted);
  int ok = recorded == submitted;
  puts(ok ? "W OK" : "W FAILED");
  CHECK(clReleaseMemObject(x));
  CHECK(clReleaseMemObject(y));
  CHECK(clReleaseCommandQueue(q));
  CHECK(clReleaseContext(context));
  return ok ? 0 : 1;
}
