/* The samples' OpenCL workload: a vector addition, a scaling and a few copies and a fill on the
 * first real OpenCL device found (a GPU if there is one). It knows nothing of libpti. */
#ifndef PTI_SAMPLES_WORKLOAD_H_
#define PTI_SAMPLES_WORKLOAD_H_

/* Runs the workload `rounds` times; prints the device and the result to stdout when `verbose`.
 * Returns 0 on success; prints why and returns non-zero if OpenCL fails. */
int run_workload(int rounds, int verbose);

#endif
