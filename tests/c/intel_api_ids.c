/* Every API ID a library built for Intel PTI's view API names, written as lines
 * "I <group> <id> <name>", and what ptiViewEnableDriverApi / ptiViewEnableRuntimeApi answer for
 * each ID, as "E <group> <id> <result>" (only where the answer is not PTI_ERROR_BAD_API_ID):
 * tests/beside_intel_pti.rs runs it on Intel's library and on libpti's Intel face and compares
 * the lines (issue 37: Intel's Level Zero numbers on the Intel face).
 *
 * IDs 0 to 8191 of the Level Zero (1) and SYCL (3) groups. Build against the Intel-face headers
 * (-Iinclude/pti-intel -Iinclude) and link libpti_view.so.1.
 */
#include <stdio.h>

#include "pti/pti_view.h"

int main(void) {
  static const pti_api_group_id groups[] = {PTI_API_GROUP_LEVELZERO, PTI_API_GROUP_SYCL};
  for (unsigned g = 0; g < sizeof groups / sizeof groups[0]; ++g) {
    for (uint32_t id = 0; id < 8192; ++id) {
      const char* name = NULL;
      if (ptiViewGetApiIdName(groups[g], id, &name) == PTI_SUCCESS && name) {
        printf("I %d %u %s\n", (int)groups[g], id, name);
      }
    }
  }
  /* Enabling needs the callbacks; a per-function call makes the group's filter granular. */
  for (uint32_t id = 0; id < 8192; ++id) {
    pti_result r = ptiViewEnableDriverApi(1, PTI_API_GROUP_LEVELZERO, id);
    if (r != PTI_ERROR_BAD_API_ID) printf("E 1 %u %s\n", id, ptiResultTypeToString(r));
    r = ptiViewEnableRuntimeApi(1, PTI_API_GROUP_SYCL, id);
    if (r != PTI_ERROR_BAD_API_ID) printf("E 3 %u %s\n", id, ptiResultTypeToString(r));
  }
  fflush(stdout);
  return 0;
}
