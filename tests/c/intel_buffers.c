/* When a library built for Intel PTI's view API asks for buffers and hands them back, written as
 * lines "B <what> ...": tests/beside_intel_pti.rs runs it on Intel's library and on libpti's
 * Intel face and compares the lines (issue 37, item 5).
 *
 * It sets the buffer callbacks, enables the driver-API view (no call is traced: the program
 * makes none), flushes twice, and prints after each step how many buffers were asked for and
 * handed back, and the valid size of each one handed back. Build against the Intel-face
 * headers (-Iinclude/pti-intel -Iinclude) and link libpti_view.so.1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pti/pti_view.h"

static int requests, completions;

static void requested(unsigned char** buffer, size_t* size) {
  ++requests;
  *size = 1 << 16;
  *buffer = malloc(*size);
}

static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  ++completions;
  printf("B COMPLETE used %zu\n", used);
  free(buffer);
}

static void step(const char* what, pti_result result) {
  printf("B %s %s requests %d completions %d\n", what, ptiResultTypeToString(result), requests, completions);
}

int main(void) {
  step("SET_CALLBACKS", ptiViewSetCallbacks(requested, completed));
  step("ENABLE", ptiViewEnable(PTI_VIEW_DRIVER_API));
  step("FLUSH", ptiFlushAllViews());
  step("FLUSH", ptiFlushAllViews());
  step("DISABLE", ptiViewDisable(PTI_VIEW_DRIVER_API));
  fflush(stdout);
  return 0;
}
