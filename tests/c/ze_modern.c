/* Level Zero's modern paths under libpti, over the simulated driver behind loader 1.8.12: the
 * functions of spec 1.9 and later and Intel's zexCounterBasedEventCreate2, which a program on
 * that loader can only obtain through zeDriverGetExtensionFunctionAddress (and which Intel's
 * runtimes obtain that way on every loader).
 *
 * The program part prints what it did ("W APPEND <function> <calls>", "W WAIT <path> <start>
 * <end>" around each host wait, "W RESULT ..."); the tool part (the view API) prints every
 * record ("T ..."), the dropped counts and critical events, for tests/level_zero.rs to check:
 * commands appended = device records + counted losses, each record's correlation ID that of
 * its appending call, times ordered and within the wait that followed. Built against the newest
 * Level Zero headers (.cache/level-zero), linked with the installed loader. */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pti/pti_callback.h"
#include "pti/pti_ext.h"
#include "pti/pti_view.h"

static ze_driver_handle_t driver;
static ze_context_handle_t context;
static ze_device_handle_t device;
static ze_module_handle_t module;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define ZE(call)                                                                  \
  do {                                                                            \
    ze_result_t r_ = (call);                                                      \
    if (r_ != ZE_RESULT_SUCCESS) {                                                \
      fprintf(stderr, "ze_modern: %s failed: 0x%x\n", #call, (unsigned)r_);       \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

#define OKAY(call)                                                                \
  do {                                                                            \
    pti_result r_ = (call);                                                       \
    if (r_ != PTI_SUCCESS) {                                                      \
      fprintf(stderr, "ze_modern: %s: %s\n", #call, ptiResultTypeToString(r_));   \
      exit(3);                                                                    \
    }                                                                             \
  } while (0)

/* Intel's descriptor of zexCounterBasedEventCreate2 (no Level Zero header declares it). */
typedef struct {
  uint32_t stype;
  const void* pNext;
  uint32_t flags;
  uint32_t signalScope;
  uint32_t waitScope;
} zex_counter_based_event_desc;
typedef ze_result_t (*zex_create_fn)(ze_context_handle_t, ze_device_handle_t, const void*,
                                     ze_event_handle_t*);
#define ZEX_FLAG_IMMEDIATE 1u
#define ZEX_FLAG_HOST_VISIBLE 4u

/* A function of the extension route; exits if the driver does not serve it. */
static void* extension(const char* name) {
  void* f = NULL;
  ZE(zeDriverGetExtensionFunctionAddress(driver, name, &f));
  if (!f) {
    fprintf(stderr, "ze_modern: the driver serves no %s\n", name);
    exit(2);
  }
  return f;
}

static uint64_t now(void) { return ptiViewGetTimestamp(); }

static void append_done(const char* function, int calls) {
  printf("W APPEND %s %d\n", function, calls);
}

/* Waits through `wait` (which returns a status) and prints its bracket for `path`. */
#define WAIT(path, call)                                                           \
  do {                                                                             \
    uint64_t s_ = now();                                                           \
    ZE(call);                                                                      \
    uint64_t e_ = now();                                                           \
    printf("W WAIT %s %llu %llu\n", path, (unsigned long long)s_, (unsigned long long)e_); \
  } while (0)

static ze_kernel_handle_t spin_kernel(uint32_t microseconds) {
  ze_kernel_desc_t desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "spin"};
  ze_kernel_handle_t k = NULL;
  ZE(zeKernelCreate(module, &desc, &k));
  ZE(zeKernelSetArgumentValue(k, 0, sizeof microseconds, &microseconds));
  return k;
}

static void host_function(void* user_data) { ++*(int*)user_data; }

static void workload(void) {
  uint32_t n = 1;
  ZE(zeInit(0));
  ZE(zeDriverGet(&n, &driver));
  n = 1;
  ZE(zeDeviceGet(driver, &n, &device));
  ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
  ZE(zeContextCreate(driver, &cdesc, &context));
  ze_module_desc_t mdesc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, 4,
                            (const uint8_t*)"none", NULL, NULL};
  ZE(zeModuleCreate(context, device, &mdesc, &module, NULL));

  ze_pfnEventCounterBasedCreate_t cb_create = extension("zeEventCounterBasedCreate");
  zex_create_fn zex_create = extension("zexCounterBasedEventCreate2");
  ze_pfnCommandListAppendLaunchKernelWithParameters_t launch_p =
      extension("zeCommandListAppendLaunchKernelWithParameters");
  ze_pfnCommandListAppendLaunchKernelWithArguments_t launch_a =
      extension("zeCommandListAppendLaunchKernelWithArguments");
  ze_pfnCommandListAppendMemoryCopyWithParameters_t copy_p =
      extension("zeCommandListAppendMemoryCopyWithParameters");
  ze_pfnCommandListAppendMemoryFillWithParameters_t fill_p =
      extension("zeCommandListAppendMemoryFillWithParameters");
  ze_pfnCommandListAppendHostFunction_t host_fn = extension("zeCommandListAppendHostFunction");
  ze_pfnCommandListImmediateAppendCommandListsExp_t run_exp =
      extension("zeCommandListImmediateAppendCommandListsExp");
  ze_pfnCommandListImmediateAppendCommandListsWithParameters_t run_p =
      extension("zeCommandListImmediateAppendCommandListsWithParameters");
  ze_pfnCommandListHostSynchronize_t list_sync = extension("zeCommandListHostSynchronize");

  /* An in-order immediate list, as the UR Level Zero v2 adapter makes them. */
  ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0,
                                   ZE_COMMAND_QUEUE_FLAG_IN_ORDER,
                                   ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                   ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t list = NULL;
  ZE(zeCommandListCreateImmediate(context, device, &qdesc, &list));
  ze_kernel_handle_t spin = spin_kernel(50);
  ze_group_count_t one = {1, 1, 1};
  size_t bytes = 1 << 16;
  ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
  ze_device_mem_alloc_desc_t ddesc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
  void *host = NULL, *dev = NULL;
  ZE(zeMemAllocHost(context, &hdesc, bytes, 64, &host));
  ZE(zeMemAllocDevice(context, &ddesc, bytes, 64, device, &dev));
  memset(host, 7, bytes);

  /* A: a counter-based event with timestamps (the standard way), signalled by three kernels. */
  ze_event_counter_based_desc_t cbdesc = {
      ZE_STRUCTURE_TYPE_EVENT_COUNTER_BASED_DESC, NULL,
      ZE_EVENT_COUNTER_BASED_FLAG_IMMEDIATE | ZE_EVENT_COUNTER_BASED_FLAG_HOST_VISIBLE |
          ZE_EVENT_COUNTER_BASED_FLAG_DEVICE_TIMESTAMP,
      ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t cb = NULL;
  ZE(cb_create(context, device, &cbdesc, &cb));
  for (int i = 0; i < 3; ++i) ZE(zeCommandListAppendLaunchKernel(list, spin, &one, cb, 0, NULL));
  append_done("zeCommandListAppendLaunchKernel", 3);
  WAIT("A", zeEventHostSynchronize(cb, UINT64_MAX));

  /* B: Intel's counter-based event without timestamps, as UR v2 creates them; two copies. */
  zex_counter_based_event_desc zdesc = {0, NULL, ZEX_FLAG_IMMEDIATE | ZEX_FLAG_HOST_VISIBLE,
                                        ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_DEVICE};
  ze_event_handle_t zcb = NULL;
  ZE(zex_create(context, device, &zdesc, &zcb));
  ZE(zeCommandListAppendMemoryCopy(list, dev, host, bytes, zcb, 0, NULL));
  ZE(zeCommandListAppendMemoryCopy(list, host, dev, bytes, zcb, 0, NULL));
  append_done("zeCommandListAppendMemoryCopy", 2);
  WAIT("B", zeEventHostSynchronize(zcb, UINT64_MAX));

  /* C: the ...WithParameters appends and a host function, waited for by the list itself. */
  int calls = 0;
  float pattern = 1.5f;
  ZE(launch_p(list, spin, &one, NULL, NULL, 0, NULL));
  uint32_t spin_us = 20;
  void* spin_args[] = {&spin_us};
  ze_group_size_t one_item = {1, 1, 1};
  ZE(launch_a(list, spin, one, one_item, spin_args, NULL, NULL, 0, NULL));
  ZE(copy_p(list, dev, host, bytes, NULL, NULL, 0, NULL));
  ZE(fill_p(list, dev, &pattern, sizeof pattern, bytes, NULL, NULL, 0, NULL));
  ZE(host_fn(list, host_function, &calls, NULL, NULL, 0, NULL));
  append_done("zeCommandListAppendLaunchKernelWithParameters", 1);
  append_done("zeCommandListAppendLaunchKernelWithArguments", 1);
  append_done("zeCommandListAppendMemoryCopyWithParameters", 1);
  append_done("zeCommandListAppendMemoryFillWithParameters", 1);
  append_done("zeCommandListAppendHostFunction", 1);
  WAIT("C", list_sync(list, UINT64_MAX));
  printf("W RESULT host_function_calls %d\n", calls);

  /* E: a regular list (a kernel and a fill) run on the immediate list, twice one way, once the
   * other; each run is waited for. Its commands are recorded at each run (with their append
   * calls' IDs; an execution record names the run). */
  ze_command_list_desc_t ldesc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0,
                                  ZE_COMMAND_LIST_FLAG_IN_ORDER};
  ze_command_list_handle_t regular = NULL;
  ZE(zeCommandListCreate(context, device, &ldesc, &regular));
  ZE(zeCommandListAppendLaunchKernel(regular, spin, &one, NULL, 0, NULL));
  ZE(zeCommandListAppendMemoryFill(regular, dev, &pattern, sizeof pattern, bytes, NULL, 0, NULL));
  ZE(zeCommandListClose(regular));
  /* Traced calls: their commands are recorded at each run with the append call's ID, and a
   * command-execution record names the run. */
  printf("W APPEND_REGULAR zeCommandListAppendLaunchKernel 1\n");
  printf("W APPEND_REGULAR zeCommandListAppendMemoryFill 1\n");
  for (int i = 0; i < 2; ++i) {
    ZE(run_exp(list, 1, &regular, NULL, 0, NULL));
    WAIT("E", list_sync(list, UINT64_MAX));
  }
  append_done("zeCommandListImmediateAppendCommandListsExp", 2);
  ZE(run_p(list, 1, &regular, NULL, NULL, 0, NULL));
  WAIT("F", list_sync(list, UINT64_MAX));
  append_done("zeCommandListImmediateAppendCommandListsWithParameters", 1);

  ZE(zeCommandListDestroy(regular));
  ZE(zeEventDestroy(cb));
  ZE(zeEventDestroy(zcb));
  ZE(zeKernelDestroy(spin));
  ZE(zeMemFree(context, host));
  ZE(zeMemFree(context, dev));
  ZE(zeCommandListDestroy(list));
  ZE(zeModuleDestroy(module));
  ZE(zeContextDestroy(context));
}

static void on_critical(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                        uint32_t api_id, void* cb_data) {
  (void)user_data, (void)group, (void)api_id;
  if (domain != PTI_DOMAIN_PTI_CRITICAL_EVENT) return;
  pti_critical_event_callback_data* c = cb_data;
  pthread_mutex_lock(&lock);
  printf("T CRITICAL %d %s\n", (int)c->_pti_event, c->_message);
  pthread_mutex_unlock(&lock);
}

static void requested(unsigned char** buffer, size_t* size) {
  *size = 1 << 20;
  *buffer = malloc(*size);
}

static void completed(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  pthread_mutex_lock(&lock);
  while (ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) {
    switch (r->_view_kind) {
      case PTI_VIEW_DRIVER_API: {
        pti_view_record_api* a = (void*)r;
        printf("T API %u %u %llu %llu\n", a->_api_id, a->_correlation_id,
               (unsigned long long)a->_start_timestamp, (unsigned long long)a->_end_timestamp);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_KERNEL:
      case PTI_VIEW_DEVICE_CPU_KERNEL: {
        pti_view_record_kernel_v2* k = (void*)r;
        printf("T DEVICE KERNEL %u %llu %llu %llu %s\n", k->_correlation_id,
               (unsigned long long)k->_start_timestamp, (unsigned long long)k->_end_timestamp,
               (unsigned long long)k->_kernel_id, k->_name);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_COPY: {
        pti_view_record_memory_copy_v2* c = (void*)r;
        printf("T DEVICE COPY %u %llu %llu %llu %s\n", c->_correlation_id,
               (unsigned long long)c->_start_timestamp, (unsigned long long)c->_end_timestamp,
               (unsigned long long)c->_mem_op_id, c->_name);
        break;
      }
      case PTI_VIEW_DEVICE_GPU_MEM_FILL: {
        pti_view_record_memory_fill_v2* f = (void*)r;
        printf("T DEVICE FILL %u %llu %llu %llu %s\n", f->_correlation_id,
               (unsigned long long)f->_start_timestamp, (unsigned long long)f->_end_timestamp,
               (unsigned long long)f->_mem_op_id, f->_name);
        break;
      }
      case PTI_VIEW_DEVICE_SYNCHRONIZATION: {
        pti_view_record_synchronization* s = (void*)r;
        printf("T SYNC %u %u %u %llu %llu\n", (unsigned)s->_synch_type, s->_api_id,
               s->_correlation_id, (unsigned long long)s->_start_timestamp,
               (unsigned long long)s->_end_timestamp);
        break;
      }
      case PTI_VIEW_EXT_COMMAND_EXECUTION: {
        pti_view_record_command_execution* x = (void*)r;
        printf("T EXEC %llu %u %u\n", (unsigned long long)x->_operation_id, x->_correlation_id, x->_api_id);
        break;
      }
      default:
        printf("T OTHER %d\n", (int)r->_view_kind);
    }
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

static const pti_view_kind views[] = {PTI_VIEW_DRIVER_API, PTI_VIEW_DEVICE_GPU_KERNEL,
                                      PTI_VIEW_DEVICE_CPU_KERNEL, PTI_VIEW_DEVICE_GPU_MEM_COPY,
                                      PTI_VIEW_DEVICE_GPU_MEM_FILL,
                                      PTI_VIEW_DEVICE_SYNCHRONIZATION, PTI_VIEW_EXT_COMMAND_EXECUTION};
#define N_VIEWS (sizeof views / sizeof views[0])

int main(void) {
  pti_callback_subscriber sub;
  OKAY(ptiCallbackSubscribe(&sub, on_critical, NULL));
  OKAY(ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_PTI_CRITICAL_EVENT));
  OKAY(ptiViewSetCallbacks(requested, completed));
  for (size_t i = 0; i < N_VIEWS; ++i) OKAY(ptiViewEnable(views[i]));
  workload();
  OKAY(ptiFlushAllViews());
  for (size_t i = 0; i < N_VIEWS; ++i) {
    uint64_t dropped = 0;
    OKAY(ptiViewGetDroppedRecordCount(views[i], &dropped));
    printf("T DROPPED %d %llu\n", (int)views[i], (unsigned long long)dropped);
  }
  uint32_t intercepted = 0;
  OKAY(ptiGetInterceptedFunctionCount(PTI_API_GROUP_LEVELZERO, &intercepted));
  printf("T INTERCEPTED %u\n", intercepted);
  printf("T LOCAL %s\n", ptiResultTypeToString(ptiViewGPULocalAvailable()));
  return 0;
}
