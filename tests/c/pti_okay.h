/* OKAY(call): a libpti call that must succeed, or the test program exits with its name. */
#ifndef PTI_TESTS_OKAY_H_
#define PTI_TESTS_OKAY_H_

#include <stdio.h>
#include <stdlib.h>

#include "pti/pti.h"

#define OKAY(call)                                        \
  do {                                                    \
    pti_result r_ = (call);                               \
    if (r_ != PTI_SUCCESS) {                              \
      fprintf(stderr, "%s failed: %d\n", #call, (int)r_); \
      exit(1);                                            \
    }                                                     \
  } while (0)

#endif /* PTI_TESTS_OKAY_H_ */
