/* zesInit for Intel's PTI library (pti/libpti.so of PyPI intel-pti), which links against it while
 * the Level Zero loader 1.8.12 installed here lacks it. Preloaded only into the runs that load
 * Intel's library; the simulated driver has no Sysman, which this answers as a newer loader
 * would for such a driver (ZE_RESULT_ERROR_UNSUPPORTED_FEATURE). */
#include <stdint.h>

int zesInit(uint32_t flags) {
  (void)flags;
  return 0x78000003; /* ZE_RESULT_ERROR_UNSUPPORTED_FEATURE */
}
