/* An XPTI subscriber that is not libpti and does nothing: the SYCL test configures it in
 * XPTI_SUBSCRIBERS to check that libpti leaves another subscriber alone and says so. */
void xptiTraceInit(unsigned int major, unsigned int minor, const char* version, const char* stream);
void xptiTraceFinish(const char* stream);

void xptiTraceInit(unsigned int major, unsigned int minor, const char* version, const char* stream) {
  (void)major, (void)minor, (void)version, (void)stream;
}

void xptiTraceFinish(const char* stream) { (void)stream; }
