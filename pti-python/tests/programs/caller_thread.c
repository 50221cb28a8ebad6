/* A runtime thread the interpreter does not know: it calls OpenCL in a loop until the process
 * ends, so a Python callback subscribed to OpenCL calls is still being called while the
 * interpreter exits. Built by test_shutdown.py. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>

static long calls;

static void *loop(void *unused) {
    (void)unused;
    for (;;) {
        cl_uint n = 0;
        clGetPlatformIDs(0, NULL, &n);
        __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int start_caller(void) {
    pthread_t thread;
    return pthread_create(&thread, NULL, loop, NULL);
}

long caller_calls(void) { return __atomic_load_n(&calls, __ATOMIC_RELAXED); }
