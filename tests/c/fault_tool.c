/* The tool of the fault-injection tests (tests/fault_injection.rs): a library preloaded into any
 * program (LD_PRELOAD) that, when loaded, subscribes to every API call and to critical events and
 * enables the API and device views, and at exit flushes and reports what it received:
 *
 *   F CRITICAL <code> <message>   each critical event, when delivered
 *   F CALLS <enters> <exits>      callbacks received
 *   F RECORDS <n>                 view records received
 *   F UNTRACED <level zero> <opencl> <sycl>   ptiGetUntracedCallCount of each group
 *
 * It checks nothing itself: under an injected fault, ENTERs without EXITs and missing records are
 * what libpti documents. The test checks that the program's own output and its calls into the
 * runtime are unchanged, and that the critical event came. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pti/pti_callback.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"

static atomic_ulong enters, exits, records;
static pti_callback_subscriber subscriber;

static void on_callback(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                        uint32_t api_id, void* cb_data) {
  (void)user_data, (void)group, (void)api_id;
  if (domain == PTI_DOMAIN_PTI_CRITICAL_EVENT) {
    pti_critical_event_callback_data* c = cb_data;
    printf("F CRITICAL %d %s\n", (int)c->_pti_event, c->_message);
    fflush(stdout);
    return;
  }
  pti_apicall_callback_data* d = cb_data;
  atomic_fetch_add(d->_site == PTI_SITE_ENTER ? &enters : &exits, 1);
}

static void requested(unsigned char** buf, size_t* size) {
  *size = 1 << 20;
  *buf = malloc(*size);
  if (!*buf) *size = 0;
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buf, used, &r) == PTI_SUCCESS && r) atomic_fetch_add(&records, 1);
  free(buf);
}

static void report(void) {
  ptiFlushAllViews();
  printf("F CALLS %lu %lu\n", atomic_load(&enters), atomic_load(&exits));
  printf("F RECORDS %lu\n", atomic_load(&records));
  uint64_t lz = 0, cl = 0, sycl = 0;
  ptiGetUntracedCallCount(PTI_API_GROUP_LEVELZERO, &lz);
  ptiGetUntracedCallCount(PTI_API_GROUP_OPENCL, &cl);
  ptiGetUntracedCallCount(PTI_API_GROUP_SYCL, &sycl);
  printf("F UNTRACED %lu %lu %lu\n", (unsigned long)lz, (unsigned long)cl, (unsigned long)sycl);
  fflush(stdout);
}

__attribute__((constructor)) static void start(void) {
  if (ptiCallbackSubscribe(&subscriber, on_callback, NULL) != PTI_SUCCESS) {
    fprintf(stderr, "fault_tool: cannot subscribe\n");
    return;
  }
  ptiCallbackEnableDomain(1, subscriber, PTI_DOMAIN_PTI_CRITICAL_EVENT);
  /* FAULT_TOOL_VIEWS_ONLY=1: no API callbacks, so that OpenCL's enqueue calls take their
     records-only path (its own fault points). */
  const char* views_only = getenv("FAULT_TOOL_VIEWS_ONLY");
  if (!views_only || strcmp(views_only, "1") != 0) {
    ptiCallbackEnableDomain(1, subscriber, PTI_DOMAIN_DRIVER_API);
    ptiCallbackEnableDomain(1, subscriber, PTI_DOMAIN_RUNTIME_API);
  }
  ptiViewSetCallbacks(requested, completed);
  const pti_view_kind views[] = {
      PTI_VIEW_DRIVER_API,          PTI_VIEW_RUNTIME_API,         PTI_VIEW_DEVICE_GPU_KERNEL,
      PTI_VIEW_DEVICE_CPU_KERNEL,   PTI_VIEW_DEVICE_GPU_MEM_COPY, PTI_VIEW_DEVICE_GPU_MEM_FILL,
      PTI_VIEW_DEVICE_SYNCHRONIZATION};
  for (size_t i = 0; i < sizeof views / sizeof *views; i++) ptiViewEnable(views[i]);
  atexit(report);
}
