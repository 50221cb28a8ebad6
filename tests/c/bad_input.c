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

/* The XPTI subscriber entry points libpti exports (declared by XPTI's headers, not libpti's). */
void xptiTraceInit(unsigned int major, unsigned int minor, const char* version, const char* stream);
void xptiTraceFinish(const char* stream);
/* The ITT collector entry point libpti exports (ITT's static part calls it; no header of
 * libpti's declares it). */
void __itt_api_init(void* global, int groups);

#include "check.h"

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
  const uint32_t unknown_results[] = {9, 97, 199, 299, 306, 0x7fffffffu, 0xffffffffu};
  for (size_t i = 0; i < sizeof unknown_results / sizeof *unknown_results; i++)
    CHECK(strcmp(ptiResultTypeToString((pti_result)unknown_results[i]), "UNKNOWN_PTI_RESULT") == 0);
  pti_version v = ptiVersion();
  CHECK(v._major == LIBPTI_VERSION_MAJOR && v._minor == LIBPTI_VERSION_MINOR && v._patch == LIBPTI_VERSION_PATCH);
  CHECK(strcmp(ptiVersionString(), LIBPTI_VERSION_STRING) == 0);

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

/* The OpenCL loader-layer entry points, typed plainly (Khronos's CL/cl_layer.h declares them). */
int32_t clGetLayerInfo(uint32_t param_name, size_t size, void* value, size_t* size_ret);
int32_t clInitLayer(uint32_t num_entries, const void* target, uint32_t* num_entries_ret, const void** layer_ret);
int32_t clInitLayerWithProperties(uint32_t num_entries, const void* target, uint32_t* num_entries_ret,
                                  const void** layer_ret, const uint64_t* properties);
int32_t clDeinitLayer(void);
#define CL_SUCCESS_ 0
#define CL_INVALID_VALUE_ (-30)

/* The layer entry points with bad arguments, as a loader could pass them. None initialises the
 * layer: every call here fails before it takes a table. */
static void bad_layer_arguments(void) {
  uint32_t version = 0;
  size_t size = 0;
  CHECK(clGetLayerInfo(0x4240 /* CL_LAYER_API_VERSION */, sizeof version, &version, &size) == CL_SUCCESS_);
  CHECK(version == 100 && size == sizeof version);
  char name[8];
  CHECK(clGetLayerInfo(0x4241 /* CL_LAYER_NAME */, 0, NULL, &size) == CL_SUCCESS_ && size > sizeof name);
  CHECK(clGetLayerInfo(0x4241, sizeof name, name, NULL) == CL_INVALID_VALUE_); /* too small */
  CHECK(clGetLayerInfo(0x1234, sizeof version, &version, &size) == CL_INVALID_VALUE_);
  const void* table[160] = {0};
  const void* layer = NULL;
  uint32_t entries = 7;
  CHECK(clInitLayer(160, NULL, &entries, &layer) == CL_INVALID_VALUE_);
  CHECK(clInitLayer(160, table, NULL, &layer) == CL_INVALID_VALUE_);
  CHECK(clInitLayer(160, table, &entries, NULL) == CL_INVALID_VALUE_);
  const uint64_t unknown_property[] = {0x9999, 1, 0};
  CHECK(clInitLayerWithProperties(160, table, &entries, &layer, unknown_property) == CL_INVALID_VALUE_);
  CHECK(clInitLayerWithProperties(160, NULL, &entries, &layer, NULL) == CL_INVALID_VALUE_);
  CHECK(entries == 7 && layer == NULL);
  CHECK(clDeinitLayer() == CL_SUCCESS_); /* nothing was initialised: nothing to do */
  /* The XPTI subscriber entry points ignore what they do not know (no framework is loaded). */
  xptiTraceInit(0, 0, NULL, NULL);
  xptiTraceInit(1, 0, "1.0", "no.such.stream");
  xptiTraceFinish(NULL);
  xptiTraceFinish("no.such.stream");
  /* The ITT entry point leaves alone what is not ITT's global (NULL, or without its magic). */
  __itt_api_init(NULL, 0);
  uint64_t not_itt[32] = {0};
  __itt_api_init(not_itt, -1);
  CHECK(not_itt[0] == 0 && not_itt[15] == 0);
  /* Pausing: no bad argument but a NULL out-parameter; the state round-trips. */
  uint32_t paused = 99;
  EXPECT(ptiViewIsPaused(NULL), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewIsPaused(&paused), PTI_SUCCESS);
  CHECK(paused == 0);
  EXPECT(ptiViewPause(), PTI_SUCCESS);
  EXPECT(ptiViewIsPaused(&paused), PTI_SUCCESS);
  CHECK(paused == 1);
  EXPECT(ptiViewResume(), PTI_SUCCESS);
  EXPECT(ptiViewIsPaused(&paused), PTI_SUCCESS);
  CHECK(paused == 0);
  uint64_t pending = 99;
  EXPECT(ptiViewGetPendingDeviceRecordCount(NULL), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewGetPendingDeviceRecordCount(&pending), PTI_SUCCESS);
  CHECK(pending == 0);
  uint32_t intercepted = 99;
  EXPECT(ptiGetInterceptedFunctionCount(PTI_API_GROUP_OPENCL, NULL), PTI_ERROR_BAD_ARGUMENT);
  const uint32_t not_groups[] = {PTI_API_GROUP_RESERVED, PTI_API_GROUP_ALL, 6, 0xffffffffu};
  for (size_t i = 0; i < sizeof not_groups / sizeof *not_groups; i++)
    EXPECT(ptiGetInterceptedFunctionCount((pti_api_group_id)not_groups[i], &intercepted), PTI_ERROR_BAD_ARGUMENT);
  CHECK(intercepted == 99); /* untouched on error */
  EXPECT(ptiGetInterceptedFunctionCount(PTI_API_GROUP_SYCL, &intercepted), PTI_SUCCESS);
  CHECK(intercepted == 0);
  uint64_t untraced = 99;
  EXPECT(ptiGetUntracedCallCount(PTI_API_GROUP_OPENCL, NULL), PTI_ERROR_BAD_ARGUMENT);
  for (size_t i = 0; i < sizeof not_groups / sizeof *not_groups; i++)
    EXPECT(ptiGetUntracedCallCount((pti_api_group_id)not_groups[i], &untraced), PTI_ERROR_BAD_ARGUMENT);
  CHECK(untraced == 99); /* untouched on error */
  EXPECT(ptiGetUntracedCallCount(PTI_API_GROUP_LEVELZERO, &untraced), PTI_SUCCESS);
  uint64_t unrecorded = 99;
  EXPECT(ptiViewGetUnrecordedCommandCount(PTI_API_GROUP_OPENCL, clEnqueueMigrateMemObjects_id, NULL), PTI_ERROR_BAD_ARGUMENT);
  for (size_t i = 0; i < sizeof not_groups / sizeof *not_groups; i++)
    EXPECT(ptiViewGetUnrecordedCommandCount((pti_api_group_id)not_groups[i], 1, &unrecorded), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewGetUnrecordedCommandCount(PTI_API_GROUP_OPENCL, 100000, &unrecorded), PTI_ERROR_BAD_API_ID);
  CHECK(unrecorded == 99);
  EXPECT(ptiViewGetUnrecordedCommandCount(PTI_API_GROUP_OPENCL, clEnqueueMigrateMemObjects_id, &unrecorded), PTI_SUCCESS);
  CHECK(unrecorded == 0);
  CHECK(untraced == 0); /* no panic inside libpti */
}

static void requested(unsigned char** buf, size_t* size) { *buf = NULL, *size = 0; }
static void completed(unsigned char* buf, size_t size, size_t used) { (void)buf, (void)size, (void)used; }

/* The view API with bad arguments. Valid calls that change state are left to other tests. */
static void bad_view_arguments(void) {
  EXPECT(ptiViewSetCallbacks(NULL, completed), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewSetCallbacks(requested, NULL), PTI_ERROR_BAD_ARGUMENT);
  const uint32_t bad_kinds[] = {PTI_VIEW_INVALID, PTI_VIEW_RESERVED, 13, 0x7fffffffu, 0xffffffffu};
  for (size_t i = 0; i < sizeof bad_kinds / sizeof *bad_kinds; i++) {
    EXPECT(ptiViewEnable((pti_view_kind)bad_kinds[i]), PTI_ERROR_BAD_ARGUMENT);
    EXPECT(ptiViewDisable((pti_view_kind)bad_kinds[i]), PTI_ERROR_BAD_ARGUMENT);
    uint64_t dropped = 99;
    EXPECT(ptiViewGetDroppedRecordCount((pti_view_kind)bad_kinds[i], &dropped), PTI_ERROR_BAD_ARGUMENT);
    CHECK(dropped == 99);
    uint64_t emitted = 99;
    EXPECT(ptiViewGetEmittedRecordCount((pti_view_kind)bad_kinds[i], &emitted), PTI_ERROR_BAD_ARGUMENT);
    CHECK(emitted == 99);
  }
  EXPECT(ptiViewGetDroppedRecordCount(PTI_VIEW_DRIVER_API, NULL), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewGetEmittedRecordCount(PTI_VIEW_DRIVER_API, NULL), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewGPULocalAvailable(), PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED);

  /* ptiViewGetNextRecord never reads outside [buffer, buffer + valid_bytes). */
  uint64_t words[16];
  memset(words, 0xA5, sizeof words); /* garbage: kind 0xA5A5A5A5 */
  pti_view_record_base* rec = NULL;
  EXPECT(ptiViewGetNextRecord(NULL, sizeof words, &rec), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewGetNextRecord((uint8_t*)words, sizeof words, NULL), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewGetNextRecord((uint8_t*)words, sizeof words, &rec), PTI_ERROR_BAD_ARGUMENT);
  CHECK(rec == NULL);
  EXPECT(ptiViewGetNextRecord((uint8_t*)words, 0, &rec), PTI_STATUS_END_OF_BUFFER);
  memset(words, 0, sizeof words);
  ((pti_view_record_base*)words)->_view_kind = PTI_VIEW_DRIVER_API; /* 48 bytes */
  EXPECT(ptiViewGetNextRecord((uint8_t*)words, 40, &rec), PTI_ERROR_BAD_ARGUMENT); /* truncated */
  EXPECT(ptiViewGetNextRecord((uint8_t*)words, 48, &rec), PTI_SUCCESS);
  CHECK(rec == (pti_view_record_base*)words);
  EXPECT(ptiViewGetNextRecord((uint8_t*)words, 48, &rec), PTI_STATUS_END_OF_BUFFER);
  pti_view_record_base* foreign = (pti_view_record_base*)&local_object;
  EXPECT(ptiViewGetNextRecord((uint8_t*)words, 48, &foreign), PTI_ERROR_BAD_ARGUMENT);
  pti_view_record_base* inside = (pti_view_record_base*)((uint8_t*)words + 4);
  EXPECT(ptiViewGetNextRecord((uint8_t*)words, 48, &inside), PTI_ERROR_BAD_ARGUMENT);

  /* External correlation. */
  const uint32_t bad_external[] = {PTI_VIEW_EXTERNAL_KIND_INVALID, 6, 0xffffffffu};
  uint64_t popped = 7;
  for (size_t i = 0; i < sizeof bad_external / sizeof *bad_external; i++) {
    EXPECT(ptiViewPushExternalCorrelationId((pti_view_external_kind)bad_external[i], 1), PTI_ERROR_BAD_ARGUMENT);
    EXPECT(ptiViewPopExternalCorrelationId((pti_view_external_kind)bad_external[i], &popped), PTI_ERROR_BAD_ARGUMENT);
  }
  EXPECT(ptiViewPopExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_3, &popped), PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY);
  EXPECT(ptiViewPopExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_3, (uint64_t*)((char*)&popped + 1)),
         PTI_ERROR_BAD_ARGUMENT);
  CHECK(popped == 7);

  /* String helpers and the clock. */
  CHECK(strcmp(ptiViewOverheadKindToString((pti_view_overhead_kind)77), "INVALID") == 0);
  CHECK(strcmp(ptiViewMemoryTypeToString((pti_view_memory_type)77), "INVALID") == 0);
  CHECK(strcmp(ptiViewMemcpyTypeToString((pti_view_memcpy_type)16), "INVALID") == 0);
  CHECK(strcmp(ptiViewMemcpyTypeToString(PTI_VIEW_MEMCPY_TYPE_D2H), "D2H") == 0);
  CHECK(ptiViewGetTimestamp() != 0);
  EXPECT(ptiViewSetTimestampCallback(NULL), PTI_ERROR_BAD_ARGUMENT);

  /* API filters: wrong group for the view, unknown IDs and classes. */
  EXPECT(ptiViewEnableDriverApi(1, PTI_API_GROUP_SYCL, urQueueFinish_id), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewEnableDriverApi(1, (pti_api_group_id)77, 1), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewEnableDriverApi(1, PTI_API_GROUP_OPENCL, 100000), PTI_ERROR_BAD_API_ID);
  EXPECT(ptiViewEnableRuntimeApi(1, PTI_API_GROUP_LEVELZERO, zeInit_id), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewEnableRuntimeApi(0, PTI_API_GROUP_SYCL, 36), PTI_ERROR_BAD_API_ID);
  const uint32_t bad_classes[] = {PTI_API_CLASS_RESERVED, 3, 0xffffffffu};
  for (size_t i = 0; i < sizeof bad_classes / sizeof *bad_classes; i++) {
    EXPECT(ptiViewEnableDriverApiClass(1, (pti_api_class)bad_classes[i], PTI_API_GROUP_ALL), PTI_ERROR_BAD_ARGUMENT);
    EXPECT(ptiViewEnableRuntimeApiClass(1, (pti_api_class)bad_classes[i], PTI_API_GROUP_ALL), PTI_ERROR_BAD_ARGUMENT);
  }
  EXPECT(ptiViewEnableDriverApiClass(1, PTI_API_CLASS_ALL, PTI_API_GROUP_SYCL), PTI_ERROR_BAD_ARGUMENT);
  EXPECT(ptiViewEnableRuntimeApiClass(1, PTI_API_CLASS_ALL, PTI_API_GROUP_OPENCL), PTI_ERROR_BAD_ARGUMENT);
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
  bad_view_arguments();
  EXPECT(ptiFlushAllViews(), PTI_SUCCESS);
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
  bad_view_arguments();
  bad_layer_arguments();
  EXPECT(ptiViewEnable(PTI_VIEW_DRIVER_API), PTI_ERROR_NO_CALLBACKS_SET); /* before ptiViewSetCallbacks */
  EXPECT(ptiFlushAllViews(), PTI_SUCCESS);

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
