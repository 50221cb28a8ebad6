/* Every function of Intel PTI 1.2's ABI on libpti's libpti_view.so.1 against bad input: NULL
 * pointers, unknown enum values, handles never issued, and the metrics, metrics-scope and
 * PC-sampling APIs libpti answers as unsupported. Each call must return the code
 * docs/compatibility.md gives and leave out-parameters untouched. Linked against
 * libpti_view.so.1 and calling the plain C names, as a tool built against Intel's headers does.
 * Exits 0 only if every expectation held. */
#define PTI_SYMBOL(name)

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pti/pti.h"
#include "pti/pti_view.h"

#include "check.h"

/* Intel's declarations of what pti/pti_view.h and pti/pti.h of libpti do not declare. */
typedef void* handle;
typedef void (*intel_callback)(uint32_t, pti_api_group_id, uint32_t, void*, void*, void*, void**);
pti_result ptiCallbackSubscribe(handle* subscriber, intel_callback callback, void* user_data);
pti_result ptiCallbackUnsubscribe(handle subscriber);
pti_result ptiCallbackEnableDomain(handle subscriber, uint32_t domain, uint32_t enter_cb, uint32_t exit_cb);
pti_result ptiCallbackDisableDomain(handle subscriber, uint32_t domain);
pti_result ptiCallbackDisableAllDomains(handle subscriber);
const char* ptiCallbackDomainTypeToString(uint32_t domain);
const char* ptiCallbackPhaseTypeToString(uint32_t phase);
pti_result ptiMetricsGetDevices(void* devices, uint32_t* device_count);
pti_result ptiMetricsGetMetricGroups(handle device, void* groups, uint32_t* count);
pti_result ptiMetricsGetMetricsProperties(handle group, void* metrics);
pti_result ptiMetricsConfigureCollection(handle device, void* params, uint32_t count);
pti_result ptiMetricsStartCollection(handle device);
pti_result ptiMetricsStartCollectionPaused(handle device);
pti_result ptiMetricsPauseCollection(handle device);
pti_result ptiMetricsResumeCollection(handle device);
pti_result ptiMetricsStopCollection(handle device);
pti_result ptiMetricsGetCalculatedData(handle device, handle group, void* values, uint32_t* count);
pti_result ptiMetricsEnable(handle device);
pti_result ptiMetricsDisable(handle device);
pti_result ptiMetricsScopeEnable(handle* scope);
pti_result ptiMetricsScopeConfigure(handle scope, uint32_t mode, handle* devices, uint32_t device_count,
                                    const char** names, size_t name_count);
pti_result ptiMetricsScopeQueryCollectionBufferSize(handle scope, size_t scopes, size_t* size);
pti_result ptiMetricsScopeSetCollectionBufferSize(handle scope, size_t size);
pti_result ptiMetricsScopeStartCollection(handle scope);
pti_result ptiMetricsScopeStopCollection(handle scope);
pti_result ptiMetricsScopeDisable(handle scope);
pti_result ptiMetricsScopeGetCollectionBuffersCount(handle scope, size_t* count);
pti_result ptiMetricsScopeGetCollectionBuffer(handle scope, size_t index, void** buffer, size_t* size);
pti_result ptiMetricsScopeGetCollectionBufferProperties(handle scope, void* buffer, void* props);
pti_result ptiMetricsScopeQueryMetricsBufferSize(handle scope, void* buffer, size_t* size, size_t* records);
pti_result ptiMetricsScopeCalculateMetrics(handle scope, void* buffer, void* metrics, size_t size, size_t* records);
pti_result ptiMetricsScopeGetMetricsMetadata(handle scope, void* metadata);
pti_result ptiPcSamplingEnable(handle* sampling);
pti_result ptiPcSamplingConfigure(handle sampling, const handle* devices, size_t count, uint32_t period_ns);
pti_result ptiPcSamplingQueryCollectionBufferSize(handle sampling, size_t* size);
pti_result ptiPcSamplingSetCollectionBufferSize(handle sampling, size_t size);
pti_result ptiPcSamplingStartCollection(handle sampling);
pti_result ptiPcSamplingStopCollection(handle sampling);
pti_result ptiPcSamplingGetStallReasons(handle sampling, void* reasons, size_t* count);
pti_result ptiPcSamplingGetProfiledDevices(handle sampling, handle* devices, size_t* count);
pti_result ptiPcSamplingGetObservedKernelHandles(handle sampling, handle device, uint64_t* kernels, size_t* count);
pti_result ptiPcSamplingGetObservedKernelInfo(handle sampling, handle device, uint64_t kernel, void* info);
pti_result ptiPcSamplingGetSamplesPerInstruction(handle sampling, handle device, uint64_t kernel, void* instructions,
                                                 size_t instruction_count, uint64_t* samples, size_t sample_count);
pti_result ptiPcSamplingGetDeviceStatus(handle sampling, handle device, void* status);
pti_result ptiPcSamplingDisable(handle sampling);
void xptiTraceInit(unsigned int major, unsigned int minor, const char* version, const char* stream);
void xptiTraceFinish(const char* stream);
bool xptiQuerySubscriberStreamDetailLevel(const char* stream, void* level);

static void noop(uint32_t d, pti_api_group_id g, uint32_t i, void* c, void* data, void* u, void** inst) {
  (void)d, (void)g, (void)i, (void)c, (void)data, (void)u, (void)inst;
}

static int object;
#define BAD ((handle)&object)
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
  CHECK(strcmp(ptiViewMemoryTypeToString((pti_view_memory_type)99), "INVALID") == 0);
  CHECK(strcmp(ptiViewMemcpyTypeToString((pti_view_memcpy_type)99), "INVALID") == 0);
  EXPECT(ptiViewGPULocalAvailable(), ptiViewGPULocalAvailable());
  EXPECT(ptiFlushAllViews(), PTI_SUCCESS);

  /* Intel's Callback API. */
  handle sub = BAD;
  EXPECT(ptiCallbackSubscribe(NULL, noop, NULL), BAD_ARG);
  EXPECT(ptiCallbackSubscribe(&sub, NULL, NULL), BAD_ARG);
  CHECK(sub == BAD);
  EXPECT(ptiCallbackUnsubscribe(NULL), BAD_ARG);
  EXPECT(ptiCallbackUnsubscribe(BAD), BAD_ARG);
  EXPECT(ptiCallbackEnableDomain(NULL, 1023, 1, 1), BAD_ARG);
  EXPECT(ptiCallbackEnableDomain(BAD, 1023, 1, 1), BAD_ARG);
  EXPECT(ptiCallbackDisableDomain(BAD, 1023), BAD_ARG);
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
  handle scope = BAD;
  EXPECT(ptiMetricsScopeEnable(NULL), BAD_ARG);
  EXPECT(ptiMetricsScopeEnable(&scope), PTI_ERROR_NOT_IMPLEMENTED);
  CHECK(scope == BAD);
  size_t size = 5, records = 6;
  void* buffer = NULL;
  const char* names[] = {"GpuTime"};
  EXPECT(ptiMetricsScopeConfigure(BAD, 0, NULL, 0, names, 1), BAD_ARG);
  EXPECT(ptiMetricsScopeQueryCollectionBufferSize(BAD, 1, &size), BAD_ARG);
  EXPECT(ptiMetricsScopeSetCollectionBufferSize(BAD, 1 << 20), BAD_ARG);
  EXPECT(ptiMetricsScopeStartCollection(BAD), BAD_ARG);
  EXPECT(ptiMetricsScopeStopCollection(BAD), BAD_ARG);
  EXPECT(ptiMetricsScopeDisable(NULL), BAD_ARG);
  EXPECT(ptiMetricsScopeGetCollectionBuffersCount(BAD, &size), BAD_ARG);
  EXPECT(ptiMetricsScopeGetCollectionBuffer(BAD, 0, &buffer, &size), BAD_ARG);
  EXPECT(ptiMetricsScopeGetCollectionBufferProperties(BAD, NULL, NULL), BAD_ARG);
  EXPECT(ptiMetricsScopeQueryMetricsBufferSize(BAD, NULL, &size, &records), BAD_ARG);
  EXPECT(ptiMetricsScopeCalculateMetrics(BAD, NULL, NULL, 0, &records), BAD_ARG);
  EXPECT(ptiMetricsScopeGetMetricsMetadata(BAD, NULL), BAD_ARG);
  CHECK(size == 5 && records == 6 && buffer == NULL);

  /* PC sampling: unsupported; no handle is ever issued. */
  handle sampling = BAD;
  EXPECT(ptiPcSamplingEnable(NULL), BAD_ARG);
  EXPECT(ptiPcSamplingEnable(&sampling), (pti_result)257 /* PTI_ERROR_PC_SAMPLING_UNSUPPORTED */);
  CHECK(sampling == BAD);
  uint64_t kernels[1] = {0}, samples[1] = {0};
  EXPECT(ptiPcSamplingConfigure(BAD, NULL, 0, 1000), BAD_ARG);
  EXPECT(ptiPcSamplingQueryCollectionBufferSize(BAD, &size), BAD_ARG);
  EXPECT(ptiPcSamplingSetCollectionBufferSize(BAD, 1 << 20), BAD_ARG);
  EXPECT(ptiPcSamplingStartCollection(BAD), BAD_ARG);
  EXPECT(ptiPcSamplingStopCollection(BAD), BAD_ARG);
  EXPECT(ptiPcSamplingGetStallReasons(BAD, NULL, &size), BAD_ARG);
  EXPECT(ptiPcSamplingGetProfiledDevices(BAD, NULL, &size), BAD_ARG);
  EXPECT(ptiPcSamplingGetObservedKernelHandles(BAD, BAD, kernels, &size), BAD_ARG);
  EXPECT(ptiPcSamplingGetObservedKernelInfo(BAD, BAD, 1, NULL), BAD_ARG);
  EXPECT(ptiPcSamplingGetSamplesPerInstruction(BAD, BAD, 1, NULL, 0, samples, 1), BAD_ARG);
  EXPECT(ptiPcSamplingGetDeviceStatus(BAD, BAD, NULL), BAD_ARG);
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
