/* The OpenCL workload of the layer's tests (cl_workload.c). */
#ifndef PTI_TESTS_CL_WORKLOAD_H_
#define PTI_TESTS_CL_WORKLOAD_H_

/* Runs the workload, printing "W ..." lines; exits the process on an OpenCL error. */
int cl_workload(void);

#endif
