/* Two clients of libpti in one process (tests/c_abi.rs): client B (client_intel_like.c) exports
 * ptiCallbackSubscribe and ptiCallbackEnableDomain with Intel's signatures and is loaded before
 * libpti; client A (client_proposal.c) is a tool built against libpti's headers. Both must reach
 * the one engine in libpti.so: every simulated call is seen by both with one correlation ID.
 * Prints "two clients, one engine: N calls" on success, and what dlsym finds for the plain name
 * (the load order decides it: client B's) and for libpti's own symbol (libpti's). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int client_a_start(void);
int client_a_call(void);
int client_a_ids(const uint32_t** out);
int client_b_start(void);
int client_b_ids(const uint32_t** out);

static const char* object_of(void* address) {
  Dl_info info;
  return address && dladdr(address, &info) && info.dli_fname ? info.dli_fname : "(nothing)";
}

int main(void) {
  if (client_b_start() != 0) return 2;
  if (client_a_start() != 0) return 3;
  enum { CALLS = 5 };
  for (int i = 0; i < CALLS; i++)
    if (client_a_call() != 0) return 4;
  const uint32_t *a, *b;
  int na = client_a_ids(&a), nb = client_b_ids(&b);
  if (na != CALLS || nb != CALLS) {
    fprintf(stderr, "client A saw %d calls, client B %d, of %d\n", na, nb, CALLS);
    return 5;
  }
  for (int i = 0; i < CALLS; i++) {
    if (a[i] == 0 || a[i] != b[i] || (i > 0 && a[i] == a[i - 1])) {
      fprintf(stderr, "call %d: client A saw correlation ID %u, client B %u\n", i, a[i], b[i]);
      return 6;
    }
  }
  printf("plain ptiCallbackSubscribe: %s\n", object_of(dlsym(RTLD_DEFAULT, "ptiCallbackSubscribe")));
  printf("libpti_ptiCallbackSubscribe: %s\n",
         object_of(dlsym(RTLD_DEFAULT, "libpti_ptiCallbackSubscribe")));
  printf("two clients, one engine: %d calls, correlation IDs %u..%u seen by both\n", CALLS, a[0],
         a[CALLS - 1]);
  return 0;
}
