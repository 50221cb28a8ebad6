/* The Level Zero workload of the tracer's tests (ze_workload.c). */
#ifndef PTI_TESTS_ZE_WORKLOAD_H_
#define PTI_TESTS_ZE_WORKLOAD_H_

/* Runs the workload, printing "W ..." lines; exits the process on a Level Zero error. */
int ze_workload(void);

#endif
