/* Every function of Intel PTI 1.2's ABI on libpti's libpti_view.so.1 against bad input: NULL
 * pointers, unknown enum values, handles never issued, and the metrics, metrics-scope and
 * PC-sampling APIs libpti answers as unsupported. Each call must return the code
 * docs/compatibility.md gives and leave out-parameters untouched. Linked against
 * libpti_view.so.1 and calling the plain C names, built against libpti's Intel-compatible
 * headers as a tool built against Intel's headers is. Exits 0 only if every expectation held. */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pti/pti.h"
#include "pti/pti_view.h"

#include "check.h"

/* Intel's Callback API from the Intel-compatible pti_callback.h (include/pti-intel comes first on
 * the include path), and Intel's metrics, metrics-scope and PC-sampling headers. */
#include "pti/pti_callback.h"
#include "pti/pti_metrics.h"
#include "pti/pti_metrics_scope.h"
#include "pti/pti_pc_sampling.h"

/* The XPTI subscriber's entry points, which no PTI header declares. */
void xptiTraceInit(unsigned int major, unsigned int minor, const char* version, const char* stream);
void xptiTraceFinish(const char* stream);
bool xptiQuerySubscriberStreamDetailLevel(const char* stream, void* level);

static void noop(pti_callback_domain d, pti_api_group_id g, uint32_t i, pti_backend_ctx_t c, void* data, void* u,
                 void** inst) {
  (void)d, (void)g, (void)i, (void)c, (void)data, (void)u, (void)inst;
}

static int object;
#define BAD ((void*)&object)
#define BAD_SUB ((pti_callback_subscriber_handle)&object)
#define BAD_SCOPE ((pti_scope_collection_handle_t)&object)
#define BAD_SAMPLING ((pti_pc_sampling_handle_t)&object)
#define BAD_ARG PTI_ERROR_BAD_ARGUMENT

int main(void) {
  /* pti.h and the version, on Intel's terms. */
  pti_version v = ptiVersion();
  CHECK(v._major == 1 && v._minor == 2 && v._patch == 0);
  CHECK(strcmp(ptiVersionString(), "1.2.0") == 0);
  CHECK(strcmp(ptiResultTypeToString(PTI_ERROR_BAD_API_ID), "PTI_ERROR_BAD_API_ID") == 0);
  CHECK(strcmp(ptiResultTypeToString((pti_result)258), "PTI_ERROR_PC_SAMPLING_CONFIGURATION_FAIL") == 0);
  CHECK(strcmp(ptiResultTypeToString((pti_result)98), "PTI_ERROR_METRICS_ENABLE_FAILED") == 0);
  CHECK(strcmp(ptiResultTypeToString((pti_result)97), "INVALID") == 0);
  CHECK(strcmp(ptiResultTypeToString((pti_result)0xffffffffu), "INVALID") == 0);

  /* The View API: Intel's kinds only; the rest is libpti's own (tests/c/bad_input.c). */
  EXPECT(ptiViewSetCallbacks(NULL, NULL), BAD_ARG);
  EXPECT(ptiViewEnable((pti_view_kind)0x10001), BAD_ARG);
  EXPECT(ptiViewEnable((pti_view_kind)13), BAD_ARG);
  EXPECT(ptiViewEnable(PTI_VIEW_INVALID), BAD_ARG);
  EXPECT(ptiViewDisable((pti_view_kind)0x12345), BAD_ARG);
  EXPECT(ptiViewSetTimestampCallback(NULL), BAD_ARG);
  CHECK(ptiViewGetTimestamp() > 1700000000ull * 1000000000ull); /* the epoch */
  EXPECT(ptiViewGetNextRecord(NULL, 0, NULL), BAD_ARG);
  EXPECT(ptiViewPushExternalCorrelationId((pti_view_external_kind)99, 1), BAD_ARG);
  EXPECT(ptiViewPopExternalCorrelationId((pti_view_external_kind)99, NULL), BAD_ARG);
  const char* name = "untouched";
  EXPECT(ptiViewGetApiIdName((pti_api_group_id)77, 1, &name), BAD_ARG);
  CHECK(strcmp(name, "untouched") == 0);
  EXPECT(ptiViewEnableDriverApi(1, (pti_api_group_id)77, 1), BAD_ARG);
  EXPECT(ptiViewEnableRuntimeApi(1, (pti_api_group_id)77, 1), BAD_ARG);
  EXPECT(ptiViewEnableDriverApiClass(1, (pti_api_class)77, PTI_API_GROUP_OPENCL), BAD_ARG);
  EXPECT(ptiViewEnableRuntimeApiClass(1, (pti_api_class)77, PTI_API_GROUP_SYCL), BAD_ARG);
  CHECK(strcmp(ptiViewOverheadKindToString((pti_view_overhead_kind)99), "INVALID") == 0);
  CHECK(strcmp(ptiViewOverheadKindToString(PTI_VIEW_OVERHEAD_KIND_TIME), "Instrumentation") == 0);
  CHECK(strcmp(ptiViewOverheadKindToString(PTI_VIEW_OVERHEAD_KIND_DRIVER), "BUFFER_DRIVER") == 0);
  CHECK(strcmp(ptiViewMemoryTypeToString(PTI_VIEW_MEMORY_TYPE_MEMORY), "Host (User Allocated)") == 0);
  CHECK(strcmp(ptiViewMemoryTypeToString(PTI_VIEW_MEMORY_TYPE_DEVICE), "Device") == 0);
  CHECK(strcmp(ptiViewMemoryTypeToString((pti_view_memory_type)99), "INVALID") == 0);
  CHECK(strcmp(ptiViewMemcpyTypeToString((pti_view_memcpy_type)99), "INVALID") == 0);
  EXPECT(ptiViewGPULocalAvailable(), ptiViewGPULocalAvailable());
  EXPECT(ptiFlushAllViews(), PTI_SUCCESS);

  /* Intel's Callback API. */
  pti_callback_subscriber_handle sub = BAD_SUB;
  EXPECT(ptiCallbackSubscribe(NULL, noop, NULL), BAD_ARG);
  EXPECT(ptiCallbackSubscribe(&sub, NULL, NULL), BAD_ARG);
  CHECK(sub == BAD_SUB);
  EXPECT(ptiCallbackUnsubscribe(NULL), BAD_ARG);
  EXPECT(ptiCallbackUnsubscribe(BAD_SUB), BAD_ARG);
  EXPECT(ptiCallbackEnableDomain(NULL, 1023, 1, 1), BAD_ARG);
  EXPECT(ptiCallbackEnableDomain(BAD_SUB, 1023, 1, 1), BAD_ARG);
  EXPECT(ptiCallbackDisableDomain(BAD_SUB, 1023), BAD_ARG);
  EXPECT(ptiCallbackDisableAllDomains(NULL), BAD_ARG);
  EXPECT(ptiCallbackSubscribe(&sub, noop, NULL), PTI_SUCCESS);
  const uint32_t unknown_domains[] = {0, 10, 1022, 1026, 0x7fffffffu, 0xffffffffu};
  for (size_t i = 0; i < sizeof unknown_domains / sizeof *unknown_domains; i++) {
    EXPECT(ptiCallbackEnableDomain(sub, unknown_domains[i], 1, 1), BAD_ARG);
    EXPECT(ptiCallbackDisableDomain(sub, unknown_domains[i]), BAD_ARG);
    CHECK(strcmp(ptiCallbackDomainTypeToString(unknown_domains[i]), "INVALID") == 0);
  }
  const uint32_t not_yet[] = {1, 2, 3, 5, 7, 1024};
  for (size_t i = 0; i < sizeof not_yet / sizeof *not_yet; i++)
    EXPECT(ptiCallbackEnableDomain(sub, not_yet[i], 1, 1), PTI_ERROR_NOT_IMPLEMENTED);
  /* Appended and kernel domains need a phase; completions have only EXIT, enabled by any flags. */
  const uint32_t with_phases[] = {4, 8, 9};
  for (size_t i = 0; i < sizeof with_phases / sizeof *with_phases; i++) {
    EXPECT(ptiCallbackEnableDomain(sub, with_phases[i], 0, 0), BAD_ARG);
    EXPECT(ptiCallbackEnableDomain(sub, with_phases[i], 1, 1), PTI_SUCCESS);
    EXPECT(ptiCallbackDisableDomain(sub, with_phases[i]), PTI_SUCCESS);
  }
  EXPECT(ptiCallbackEnableDomain(sub, 6, 0, 0), PTI_SUCCESS);
  EXPECT(ptiCallbackDisableDomain(sub, 6), PTI_SUCCESS);
  EXPECT(ptiCallbackEnableDomain(sub, 1023, 1, 0), PTI_SUCCESS);
  EXPECT(ptiCallbackEnableDomain(sub, 1025, 0, 1), PTI_SUCCESS);
  EXPECT(ptiCallbackDisableDomain(sub, 1023), PTI_SUCCESS);
  EXPECT(ptiCallbackDisableAllDomains(sub), PTI_SUCCESS);
  CHECK(strcmp(ptiCallbackDomainTypeToString(1025), "PTI_CB_DOMAIN_INTERNAL_EVENT") == 0);
  CHECK(strcmp(ptiCallbackPhaseTypeToString(1), "PTI_CB_PHASE_API_ENTER") == 0);
  CHECK(strcmp(ptiCallbackPhaseTypeToString(0), "INVALID") == 0);
  CHECK(strcmp(ptiCallbackPhaseTypeToString(6), "INVALID") == 0);
  EXPECT(ptiCallbackUnsubscribe(sub), PTI_SUCCESS);
  EXPECT(ptiCallbackUnsubscribe(sub), BAD_ARG); /* stale */
  EXPECT(ptiCallbackEnableDomain(sub, 1023, 1, 1), BAD_ARG);

  /* Metrics: no device offers metrics to libpti. */
  uint32_t count = 12345;
  EXPECT(ptiMetricsGetDevices(NULL, NULL), BAD_ARG);
  EXPECT(ptiMetricsGetDevices(NULL, &count), PTI_SUCCESS);
  CHECK(count == 0);
  EXPECT(ptiMetricsEnable(NULL), (pti_result)99 /* PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED */);
  EXPECT(ptiMetricsDisable(NULL), PTI_SUCCESS);
  count = 7;
  EXPECT(ptiMetricsGetMetricGroups(BAD, NULL, &count), BAD_ARG);
  CHECK(count == 7);
  EXPECT(ptiMetricsGetMetricsProperties(BAD, NULL), BAD_ARG);
  EXPECT(ptiMetricsConfigureCollection(BAD, NULL, 1), BAD_ARG);
  EXPECT(ptiMetricsStartCollection(BAD), BAD_ARG);
  EXPECT(ptiMetricsStartCollectionPaused(NULL), BAD_ARG);
  EXPECT(ptiMetricsPauseCollection(BAD), BAD_ARG);
  EXPECT(ptiMetricsResumeCollection(BAD), BAD_ARG);
  EXPECT(ptiMetricsStopCollection(BAD), BAD_ARG);
  EXPECT(ptiMetricsGetCalculatedData(BAD, BAD, NULL, &count), BAD_ARG);

  /* Metrics scope: not implemented; no handle is ever issued. */
  pti_scope_collection_handle_t scope = BAD_SCOPE;
  EXPECT(ptiMetricsScopeEnable(NULL), BAD_ARG);
  EXPECT(ptiMetricsScopeEnable(&scope), PTI_ERROR_NOT_IMPLEMENTED);
  CHECK(scope == BAD_SCOPE);
  size_t size = 5, records = 6;
  void* buffer = NULL;
  const char* names[] = {"GpuTime"};
  EXPECT(ptiMetricsScopeConfigure(BAD_SCOPE, 0, NULL, 0, names, 1), BAD_ARG);
  EXPECT(ptiMetricsScopeQueryCollectionBufferSize(BAD_SCOPE, 1, &size), BAD_ARG);
  EXPECT(ptiMetricsScopeSetCollectionBufferSize(BAD_SCOPE, 1 << 20), BAD_ARG);
  EXPECT(ptiMetricsScopeStartCollection(BAD_SCOPE), BAD_ARG);
  EXPECT(ptiMetricsScopeStopCollection(BAD_SCOPE), BAD_ARG);
  EXPECT(ptiMetricsScopeDisable(NULL), BAD_ARG);
  EXPECT(ptiMetricsScopeGetCollectionBuffersCount(BAD_SCOPE, &size), BAD_ARG);
  EXPECT(ptiMetricsScopeGetCollectionBuffer(BAD_SCOPE, 0, &buffer, &size), BAD_ARG);
  EXPECT(ptiMetricsScopeGetCollectionBufferProperties(BAD_SCOPE, NULL, NULL), BAD_ARG);
  EXPECT(ptiMetricsScopeQueryMetricsBufferSize(BAD_SCOPE, NULL, &size, &records), BAD_ARG);
  EXPECT(ptiMetricsScopeCalculateMetrics(BAD_SCOPE, NULL, NULL, 0, &records), BAD_ARG);
  EXPECT(ptiMetricsScopeGetMetricsMetadata(BAD_SCOPE, NULL), BAD_ARG);
  CHECK(size == 5 && records == 6 && buffer == NULL);

  /* PC sampling: unsupported; no handle is ever issued. */
  pti_pc_sampling_handle_t sampling = BAD_SAMPLING;
  EXPECT(ptiPcSamplingEnable(NULL), BAD_ARG);
  EXPECT(ptiPcSamplingEnable(&sampling), (pti_result)257 /* PTI_ERROR_PC_SAMPLING_UNSUPPORTED */);
  CHECK(sampling == BAD_SAMPLING);
  uint64_t kernels[1] = {0}, samples[1] = {0};
  EXPECT(ptiPcSamplingConfigure(BAD_SAMPLING, NULL, 0, 1000), BAD_ARG);
  EXPECT(ptiPcSamplingQueryCollectionBufferSize(BAD_SAMPLING, &size), BAD_ARG);
  EXPECT(ptiPcSamplingSetCollectionBufferSize(BAD_SAMPLING, 1 << 20), BAD_ARG);
  EXPECT(ptiPcSamplingStartCollection(BAD_SAMPLING), BAD_ARG);
  EXPECT(ptiPcSamplingStopCollection(BAD_SAMPLING), BAD_ARG);
  EXPECT(ptiPcSamplingGetStallReasons(BAD_SAMPLING, NULL, &size), BAD_ARG);
  EXPECT(ptiPcSamplingGetProfiledDevices(BAD_SAMPLING, NULL, &size), BAD_ARG);
  EXPECT(ptiPcSamplingGetObservedKernelHandles(BAD_SAMPLING, BAD, kernels, &size), BAD_ARG);
  EXPECT(ptiPcSamplingGetObservedKernelInfo(BAD_SAMPLING, BAD, 1, NULL), BAD_ARG);
  EXPECT(ptiPcSamplingGetSamplesPerInstruction(BAD_SAMPLING, BAD, 1, NULL, 0, samples, 1), BAD_ARG);
  EXPECT(ptiPcSamplingGetDeviceStatus(BAD_SAMPLING, BAD, NULL), BAD_ARG);
  EXPECT(ptiPcSamplingDisable(NULL), BAD_ARG);
  CHECK(size == 5);

  /* The XPTI entry points: unknown and NULL streams are ignored; no detail preference. */
  xptiTraceInit(1, 0, "1.0", NULL);
  xptiTraceInit(1, 0, "1.0", "not.a.stream");
  xptiTraceFinish(NULL);
  xptiTraceFinish("not.a.stream");
  int level = 42;
  CHECK(!xptiQuerySubscriberStreamDetailLevel("sycl", &level) && level == 42);

  printf("intel_bad_input: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
