/* Checks for the C test programs: count every check, report each failure with its location. */
#ifndef PTI_TESTS_CHECK_H_
#define PTI_TESTS_CHECK_H_

#include <stdio.h>

#include "pti/pti.h"

static int failures, checks;

/* `cond` must hold. */
#define CHECK(cond)                                                            \
  do {                                                                         \
    checks++;                                                                  \
    if (!(cond)) {                                                             \
      failures++;                                                              \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* `call` must return `want`. */
#define EXPECT(call, want)                                                                      \
  do {                                                                                          \
    pti_result got_ = (call);                                                                   \
    checks++;                                                                                   \
    if (got_ != (want)) {                                                                       \
      failures++;                                                                               \
      fprintf(stderr, "%s:%d: %s\n  returned %s, expected %s\n", __FILE__, __LINE__, #call,     \
              ptiResultTypeToString(got_), ptiResultTypeToString(want));                        \
    }                                                                                           \
  } while (0)

/* `call` must succeed. */
#define OK(call) EXPECT(call, PTI_SUCCESS)

#endif /* PTI_TESTS_CHECK_H_ */
