/* Every exported libpti function against bad input: NULL pointers, unknown enum values, stale,
 * foreign and never-issued handles; called before any setup, after unsubscribe, and from inside
 * a callback. Each call must return its documented code and leave out-parameters untouched.
 * Exits 0 only if every expectation held; prints each failure and a count of checks. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pti/pti.h"
#include "pti/pti_callback.h"
#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_runtime_sycl_api_ids.h"
#include "pti/pti_view.h"

static int failures;
static int checks;

#define EXPECT(call, want)                                                              \
  do {                                                                                  \
    pti_result got_ = (call);                                                           \
    checks++;                                                                           \
    if (got_ != (want)) {                                                               \
      failures++;                                                                       \
      fprintf(stderr, "%s:%d: %s\n  returned %s, expected %s\n", __FILE__, __LINE__, #call, \
              ptiResultTypeToString(got_), ptiResultTypeToString(want));                \
    }                                                                                   \
  } while (0)

#define CHECK(cond)                                                            \
  do {                                                                         \
    checks++;                                                                  \
    if (!(cond)) {                                                             \
      failures++;                                                              \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define SENTINEL ((pti_callback_subscriber)(uintptr_t)0x5eed)

static void noop(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                 uint32_t api_id, void* cb_data) {
  (void)user_data, (void)domain, (void)group, (void)api_id, (void)cb_data;
}

static int body_runs;
static int32_t body(void* user_data) {
  body_runs++;
  return user_data ? *(int32_t*)user_data : 0;
}

/* Handles that must be refused: never issued, foreign (an address of ours), misaligned. */
static pti_callback_subscriber bad_handles[4];
static int local_object;

static void make_bad_handles(pti_callback_subscriber stale) {
  bad_handles[0] = stale;
  bad_handles[1] = (pti_callback_subscriber)(uintptr_t)((1000000u << 5) | 3u); /* never issued */
  bad_handles[2] = (pti_callback_subscriber)(void*)&local_object;              /* foreign */
  bad_handles[3] = (pti_callback_subscriber)(uintptr_t)0xffffffffffffffffull;  /* garbage */
}

/* Every function with every kind of bad argument. `live` is a valid subscriber. */
static void bad_arguments(pti_callback_subscriber live) {
  /* pti.h */
  CHECK(ptiVersionString() != NULL);
  CHECK(strcmp(ptiResultTypeToString(PTI_ERROR_BAD_API_ID), "PTI_ERROR_BAD_API_ID") == 0);
  const uint32_t unknown_results[] = {9, 99, 199, 299, 302, 0x7fffffffu, 0xffffffffu};
  for (size_t i = 0; i < sizeof unknown_results / sizeof *unknown_results; i++)
    CHECK(strcmp(ptiResultTypeToString((pti_result)unknown_results[i]), "UNKNOWN_PTI_RESULT") == 0);
  pti_version v = ptiVersion();
  CHECK(v._major == PTI_VERSION_MAJOR && v._minor == PTI_VERSION_MINOR && v._patch == PTI_VERSION_PATCH);

  /* pti_view.h */
  const char* name = "untouched";
  EXPECT(ptiViewGetApiIdName(PTI_API_GROUP_OPENCL, clFinish_id, NULL), PTI_ERROR_BAD_ARGUMENT);
  const uint32_t bad_groups[] = {PTI_API_GROUP_RESERVED, PTI_API_GROUP_HYBRID_SYCL_LEVELZERO,
                                 PTI_API_GROUP_HYBRID_SYCL_OPENCL, PTI_API_GROUP_ALL, 6, 0xffffffffu};
  for (size_t i = 0; i < sizeof bad_groups / sizeof *bad_groups; i++)
    EXPECT(ptiViewGetApiIdName((pti_api_group_id)bad_groups[i], 1, &name), PTI_ERROR_BAD_ARGUMENT);
  const uint32_t bad_ids[] = {0, 100000, 0xffffffffu};
  for (size_t i = 0; i < sizeof bad_ids / sizeof *bad_ids; i++) {
    EXPECT(ptiViewGetApiIdName(PTI_API_GROUP_LEVELZERO, bad_ids[i], &name), PTI_ERROR_BAD_API_ID);
    EXPECT(ptiViewGetApiIdName(PTI_API_GROUP_OPENCL, bad_ids[i], &name), PTI_ERROR_BAD_API_ID);
    EXPECT(ptiViewGetApiIdName(PTI_API_GROUP_SYCL, bad_ids[i], &name), PTI_ERROR_BAD_API_ID);
  }
  EXPECT(ptiViewGetApiIdName(PTI_API_GROUP_SYCL, 36, &name), PTI_ERROR_BAD_API_ID); /* retired */
  CHECK(strcmp(name, "untouched") == 0);

  /* pti_callback.h */
  pti_callback_subscriber out = SENTINEL;
  EXPECT(ptiCallbackSubscribe(NULL, noop, NULL), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiCallbackSubscribe(&out, NULL, NULL), PTI_ERROR_BAD_ARGUMENT);
  CHECK(out == SENTINEL);
  EXPECT(ptiCallbackUnsubscribe(NULL), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiCallbackEnableDomain(1, NULL, PTI_DOMAIN_DRIVER_API), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiCallbackEnable(1, NULL, PTI_API_GROUP_OPENCL, clFinish_id), PTI_ERROR_BAD_ARGUMENT);
  for (int h = 0; h < 4; h++) {
    EXPECT(ptiCallbackUnsubscribe(bad_handles[h]), PTI_ERROR_BAD_ARGUMENT);
    EXPECT(ptiCallbackEnableDomain(1, bad_handles[h], PTI_DOMAIN_DRIVER_API), PTI_ERROR_BAD_ARGUMENT);
    EXPECT(ptiCallbackEnableDomain(0, bad_handles[h], PTI_DOMAIN_PTI_CRITICAL_EVENT), PTI_ERROR_BAD_ARGUMENT);
    EXPECT(ptiCallbackEnable(1, bad_handles[h], PTI_API_GROUP_OPENCL, clFinish_id), PTI_ERROR_BAD_ARGUMENT);
    /* The handle is checked before the ID. */
    EXPECT(ptiCallbackEnable(1, bad_handles[h], PTI_API_GROUP_OPENCL, 100000), PTI_ERROR_BAD_ARGUMENT);
  }
  const uint32_t bad_domains[] = {PTI_DOMAIN_INVALID, 4, 77, 0x7fffffffu, 0xffffffffu};
  for (size_t i = 0; i < sizeof bad_domains / sizeof *bad_domains; i++) {
    EXPECT(ptiCallbackEnableDomain(1, live, (pti_callback_domain)bad_domains[i]), PTI_ERROR_BAD_ARGUMENT);
    EXPECT(ptiCallbackEnableDomain(0, live, (pti_callback_domain)bad_domains[i]), PTI_ERROR_BAD_ARGUMENT);
  }
  for (size_t i = 0; i < sizeof bad_groups / sizeof *bad_groups; i++)
    EXPECT(ptiCallbackEnable(1, live, (pti_api_group_id)bad_groups[i], 1), PTI_ERROR_BAD_ARGUMENT);
  /* The handle is checked before the ID: without a live subscriber, a bad handle is reported. */
  pti_result bad_id = live ? PTI_ERROR_BAD_API_ID : PTI_ERROR_BAD_ARGUMENT;
  for (size_t i = 0; i < sizeof bad_ids / sizeof *bad_ids; i++) {
    EXPECT(ptiCallbackEnable(1, live, PTI_API_GROUP_LEVELZERO, bad_ids[i]), bad_id);
    EXPECT(ptiCallbackEnable(0, live, PTI_API_GROUP_SYCL, bad_ids[i]), bad_id);
  }
  EXPECT(ptiCallbackEnable(1, live, PTI_API_GROUP_SYCL, 36), bad_id);

  /* pti_ext.h */
  uint64_t count = 12345;
  EXPECT(ptiCallbackGetCriticalEventCount(PTI_ERROR_CALLBACK_PANICKED, NULL), PTI_ERROR_BAD_ARGUMENT);
  for (size_t i = 0; i < sizeof unknown_results / sizeof *unknown_results; i++)
    EXPECT(ptiCallbackGetCriticalEventCount((pti_result)unknown_results[i], &count), PTI_ERROR_BAD_ARGUMENT);
  CHECK(count == 12345);
  int runs = body_runs;
  int32_t status = 777;
  for (size_t i = 0; i < sizeof bad_groups / sizeof *bad_groups; i++)
    EXPECT(ptiSimulateApiCall((pti_api_group_id)bad_groups[i], 1, NULL, NULL, NULL, body, NULL, &status),
           PTI_ERROR_BAD_ARGUMENT);
  for (size_t i = 0; i < sizeof bad_ids / sizeof *bad_ids; i++)
    EXPECT(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, bad_ids[i], NULL, NULL, NULL, body, NULL, &status),
           PTI_ERROR_BAD_API_ID);
  EXPECT(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, body, NULL,
                            (int32_t*)((char*)&status + 1)),
         PTI_ERROR_BAD_ARGUMENT);
  CHECK(body_runs == runs && status == 777);
}

/* What the callback does, once, from inside an ENTER. */
static pti_callback_subscriber self;
static int inside_done, callbacks_seen;
static void reentrant(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                      uint32_t api_id, void* cb_data) {
  (void)user_data, (void)domain, (void)group;
  pti_apicall_callback_data* data = (pti_apicall_callback_data*)cb_data;
  callbacks_seen++;
  if (inside_done || api_id != clFinish_id || data->_site != PTI_SITE_ENTER) return;
  inside_done = 1;
  bad_arguments(self);
  /* Valid calls from inside a callback work and do not deadlock. */
  pti_callback_subscriber other = NULL;
  EXPECT(ptiCallbackSubscribe(&other, noop, NULL), PTI_SUCCESS);
  EXPECT(ptiCallbackEnableDomain(1, other, PTI_DOMAIN_DRIVER_API), PTI_SUCCESS);
  EXPECT(ptiCallbackEnable(1, self, PTI_API_GROUP_LEVELZERO, zeInit_id), PTI_SUCCESS);
  EXPECT(ptiCallbackUnsubscribe(other), PTI_SUCCESS);
  EXPECT(ptiCallbackUnsubscribe(other), PTI_ERROR_BAD_ARGUMENT); /* now stale */
  /* A traced call made from a callback runs untraced: the body runs, no callback nests. */
  int seen = callbacks_seen;
  int32_t value = 5, status = 0;
  EXPECT(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, body, &value, &status),
         PTI_SUCCESS);
  CHECK(status == 5 && callbacks_seen == seen);
}

int main(void) {
  /* Before any setup: nothing subscribed, nothing enabled. */
  int32_t value = 3, status = 0;
  EXPECT(ptiSimulateApiCall(PTI_API_GROUP_SYCL, urQueueFinish_id, NULL, NULL, NULL, body, &value, &status),
         PTI_SUCCESS);
  CHECK(status == 3);
  EXPECT(ptiSimulateApiCall(PTI_API_GROUP_SYCL, urQueueFinish_id, NULL, NULL, NULL, NULL, NULL, NULL),
         PTI_SUCCESS);
  pti_callback_subscriber first = NULL;
  make_bad_handles((pti_callback_subscriber)(uintptr_t)((1u << 5) | 0u));
  bad_arguments(NULL);

  /* A stale handle: subscribed, then unsubscribed. */
  EXPECT(ptiCallbackSubscribe(&first, noop, NULL), PTI_SUCCESS);
  EXPECT(ptiCallbackUnsubscribe(first), PTI_SUCCESS);
  make_bad_handles(first);

  EXPECT(ptiCallbackSubscribe(&self, reentrant, NULL), PTI_SUCCESS);
  CHECK(self != NULL && self != first);
  bad_arguments(self);

  /* From inside a callback. */
  EXPECT(ptiCallbackEnable(1, self, PTI_API_GROUP_OPENCL, clFinish_id), PTI_SUCCESS);
  EXPECT(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, body, &value, &status),
         PTI_SUCCESS);
  CHECK(inside_done == 1);
  CHECK(callbacks_seen == 2); /* ENTER and EXIT of the outer call only */

  /* After unsubscribe: the handle is stale everywhere and nothing is delivered. */
  EXPECT(ptiCallbackUnsubscribe(self), PTI_SUCCESS);
  int seen = callbacks_seen;
  EXPECT(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, body, &value, &status),
         PTI_SUCCESS);
  CHECK(callbacks_seen == seen);
  make_bad_handles(self);
  pti_callback_subscriber keeper = NULL;
  EXPECT(ptiCallbackSubscribe(&keeper, noop, NULL), PTI_SUCCESS);
  bad_arguments(keeper);

  /* The subscriber limit: 32 at once, then PTI_ERROR_TOO_MANY_SUBSCRIBERS. */
  pti_callback_subscriber many[40];
  int made = 1; /* keeper */
  for (int i = 0; i < 40; i++) {
    pti_callback_subscriber h = SENTINEL;
    pti_result r = ptiCallbackSubscribe(&h, noop, NULL);
    if (r == PTI_SUCCESS) {
      many[made - 1] = h;
      made++;
    } else {
      EXPECT(r, PTI_ERROR_TOO_MANY_SUBSCRIBERS);
      CHECK(h == SENTINEL);
      break;
    }
  }
  CHECK(made == 32);
  for (int i = 0; i < made - 1; i++) EXPECT(ptiCallbackUnsubscribe(many[i]), PTI_SUCCESS);
  EXPECT(ptiCallbackUnsubscribe(keeper), PTI_SUCCESS);

  printf("bad_input: %d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
