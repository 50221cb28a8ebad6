/* The program of the README's first command: the samples' OpenCL workload on the first real
 * OpenCL device (a GPU if there is one), three rounds. It knows nothing of libpti: run it under
 * pti-trace to see its timeline.
 *
 * Build: cc samples/c/vector_add.c samples/c/workload.c -lOpenCL -o vector_add */
#include "workload.h"

int main(void) { return run_workload(3, 1); }
