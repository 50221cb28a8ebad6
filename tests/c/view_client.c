/* A view-API client written as a tool for the published PTI view API would be: only the view
 * functions of pti_view.h read the records. The workload runs on libpti's simulated-call test
 * backend (pti_ext.h); a Callback-API subscriber records the correlation ID of every call, so
 * the records can be checked against it.
 *
 *   view_client          full check: records, correlation IDs, external IDs, timestamps
 *   view_client exit     records left in buffers at exit reach buffer_completed from the exit hook
 *   view_client clock    the tool's timestamp callback stamps every record
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pti/pti_callback.h"
#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_runtime_sycl_api_ids.h"
#include "pti/pti_view.h"

#include "check.h"

#define MAX 64
static pti_view_record_api api[MAX];
static pti_view_record_external_correlation ext[MAX];
static int n_api, n_ext, n_other, buffers_completed;

/* Buffers start one byte past an 8-aligned address: records must still come out aligned. */
static void requested(unsigned char** buf, size_t* size) {
  unsigned char* raw = malloc(1 + 1024);
  *buf = raw ? raw + 1 : NULL;
  *size = 1024;
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  buffers_completed++;
  pti_view_record_base* rec = NULL;
  pti_result r;
  while ((r = ptiViewGetNextRecord(buf, used, &rec)) == PTI_SUCCESS) {
    CHECK(((uintptr_t)rec & 7) == 0);
    switch (rec->_view_kind) {
      case PTI_VIEW_DRIVER_API:
      case PTI_VIEW_RUNTIME_API:
        if (n_api < MAX) api[n_api++] = *(pti_view_record_api*)rec;
        break;
      case PTI_VIEW_EXTERNAL_CORRELATION:
        if (n_ext < MAX) ext[n_ext++] = *(pti_view_record_external_correlation*)rec;
        break;
      default:
        n_other++;
    }
  }
  CHECK(r == PTI_STATUS_END_OF_BUFFER);
  free(buf - 1);
}

/* Correlation IDs seen by callbacks at EXIT, in call order. */
static uint32_t seen_corr[MAX], seen_id[MAX];
static int n_seen;
static void on_call(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                    uint32_t api_id, void* cb_data) {
  (void)user_data, (void)domain, (void)group;
  pti_apicall_callback_data* d = cb_data;
  if (d->_site == PTI_SITE_EXIT && n_seen < MAX) {
    seen_id[n_seen] = api_id;
    seen_corr[n_seen++] = d->_correlation_id;
  }
}

static int32_t status_of(void* p) { return p ? *(int32_t*)p : 0; }

static int32_t sycl_launch(void* p) {
  (void)p;
  int32_t s = 0;
  ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clEnqueueNDRangeKernel_id, NULL, "k", NULL, status_of, NULL, &s);
  return s;
}

static const pti_view_record_api* find_api(uint32_t id) {
  for (int i = 0; i < n_api; i++)
    if (api[i]._api_id == id) return &api[i];
  return NULL;
}

static uint32_t seen_for(uint32_t id) {
  for (int i = 0; i < n_seen; i++)
    if (seen_id[i] == id) return seen_corr[i];
  return 0;
}

static int full_check(void) {
  pti_callback_subscriber sub;
  OK(ptiCallbackSubscribe(&sub, on_call, NULL));
  OK(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_DRIVER_API));
  OK(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_RUNTIME_API));
  OK(ptiViewSetCallbacks(requested, completed));
  OK(ptiViewEnable(PTI_VIEW_DRIVER_API));
  OK(ptiViewEnable(PTI_VIEW_RUNTIME_API));
  OK(ptiViewEnable(PTI_VIEW_EXTERNAL_CORRELATION));

  uint64_t t0 = ptiViewGetTimestamp();
  OK(ptiViewPushExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_1, 77));
  int32_t s, failing = -5;
  OK(ptiSimulateApiCall(PTI_API_GROUP_SYCL, urEnqueueKernelLaunch_id, NULL, "k", NULL, sycl_launch, NULL, &s));
  uint64_t popped = 0;
  OK(ptiViewPopExternalCorrelationId(PTI_VIEW_EXTERNAL_KIND_CUSTOM_1, &popped));
  CHECK(popped == 77);
  OK(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, status_of, &failing, &s));
  OK(ptiSimulateApiCall(PTI_API_GROUP_LEVELZERO, zeCommandListAppendMemoryCopy_id, NULL, NULL, NULL, NULL, NULL, &s));
  uint64_t t1 = ptiViewGetTimestamp();
  OK(ptiFlushAllViews());
  OK(ptiCallbackUnsubscribe(sub));

  CHECK(n_api == 4);
  CHECK(n_other == 0);
  const pti_view_record_api* launch = find_api(urEnqueueKernelLaunch_id);
  const pti_view_record_api* nd = find_api(clEnqueueNDRangeKernel_id);
  const pti_view_record_api* finish = find_api(clFinish_id);
  const pti_view_record_api* copy = find_api(zeCommandListAppendMemoryCopy_id);
  CHECK(launch && nd && finish && copy);
  if (!(launch && nd && finish && copy)) return 1;
  CHECK(launch->_view_kind._view_kind == PTI_VIEW_RUNTIME_API && launch->_api_group == PTI_API_GROUP_SYCL);
  CHECK(nd->_view_kind._view_kind == PTI_VIEW_DRIVER_API && nd->_api_group == PTI_API_GROUP_OPENCL);
  CHECK(copy->_api_group == PTI_API_GROUP_LEVELZERO);
  CHECK(finish->_return_code == (uint32_t)-5);
  /* The correlation IDs of the records are those the callbacks saw. */
  for (int i = 0; i < n_api; i++) CHECK(api[i]._correlation_id == seen_for(api[i]._api_id));
  CHECK(nd->_correlation_id == launch->_correlation_id); /* driver call inside the SYCL call */
  CHECK(finish->_correlation_id != launch->_correlation_id);
  for (int i = 0; i < n_api; i++) {
    CHECK(t0 <= api[i]._start_timestamp && api[i]._start_timestamp <= api[i]._end_timestamp);
    CHECK(api[i]._end_timestamp <= t1);
  }
  CHECK(launch->_start_timestamp <= nd->_start_timestamp && nd->_end_timestamp <= launch->_end_timestamp);
  /* One external record: the pushed ID on the SYCL call (the nested call shares its ID). */
  CHECK(n_ext == 1);
  CHECK(ext[0]._correlation_id == launch->_correlation_id && ext[0]._external_id == 77 &&
        ext[0]._external_kind == PTI_VIEW_EXTERNAL_KIND_CUSTOM_1);
  uint64_t dropped = 1;
  OK(ptiViewGetDroppedRecordCount(PTI_VIEW_DRIVER_API, &dropped));
  CHECK(dropped == 0);
  const char* name = NULL;
  OK(ptiViewGetApiIdName(PTI_API_GROUP_SYCL, launch->_api_id, &name));
  CHECK(name && strcmp(name, "urEnqueueKernelLaunch") == 0);
  printf("view_client: %d API records, %d external, %d buffers; %d checks, %d failures\n", n_api, n_ext,
         buffers_completed, checks, failures);
  return failures != 0;
}

static void report_at_exit(void) {
  printf("at exit: %d API records in %d buffers\n", n_api, buffers_completed);
}

static uint64_t fake_now = 5000;
static uint64_t tool_clock(void) { return fake_now++; }

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "exit") == 0) {
    atexit(report_at_exit); /* registered before libpti's hook, so it runs after it */
    OK(ptiViewSetCallbacks(requested, completed));
    OK(ptiViewEnable(PTI_VIEW_DRIVER_API));
    for (int i = 0; i < 3; i++)
      OK(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFlush_id, NULL, NULL, NULL, NULL, NULL, NULL));
    return failures; /* no flush */
  }
  if (argc > 1 && strcmp(argv[1], "clock") == 0) {
    OK(ptiViewSetTimestampCallback(tool_clock));
    OK(ptiViewSetCallbacks(requested, completed));
    OK(ptiViewEnable(PTI_VIEW_DRIVER_API));
    CHECK(ptiViewGetTimestamp() == 5000);
    OK(ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFlush_id, NULL, NULL, NULL, NULL, NULL, NULL));
    OK(ptiFlushAllViews());
    CHECK(n_api == 1 && api[0]._start_timestamp == 5001 && api[0]._end_timestamp == 5002);
    printf("clock: %d checks, %d failures\n", checks, failures);
    return failures != 0;
  }
  return full_check();
}
