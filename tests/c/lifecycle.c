/* Lifecycle of a traced process, one scenario per argument. libpti is loaded with dlopen (never
 * linked) so that each scenario chooses when; OpenCL is reached through dlopen of the loader.
 * Every scenario prints "lifecycle <scenario>: ok" and exits 0 when its checks held.
 *
 *   dlclose   libpti loaded first; a program runs OpenCL commands on PoCL with device views on,
 *             then dlcloses the OpenCL loader without waiting or flushing, flushes, opens the
 *             loader again and runs more. Every record is delivered or counted.
 *   late      OpenCL is initialised (platforms, a context) before libpti is loaded: enabling
 *             OpenCL gives PTI_ERROR_TRACING_NOT_INITIALIZED and a critical event that says why;
 *             the program's later OpenCL calls still work, untraced.
 *   late-alone  a single-threaded program: its first OpenCL call (the platforms, which loads the
 *             loader's drivers) before libpti is loaded; libpti's constructor then sets
 *             OPENCL_LAYERS, too late: enabling OpenCL still says so (the loader's driver is
 *             loaded), as in `late`.
 *   missing   no OpenCL loader and no Level Zero loader can be loaded (the test hides them):
 *             every enable and flush returns a documented code and nothing aborts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pti/pti_callback.h"
#include "pti/pti_driver_levelzero_api_ids.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_runtime_sycl_api_ids.h"
#include "pti/pti_view.h"

static int failures;
#define REQUIRE(cond)                                                                 \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      failures++;                                                                     \
      fprintf(stderr, "lifecycle.c:%d: check failed: %s\n", __LINE__, #cond);        \
    }                                                                                 \
  } while (0)

/* ---- libpti, through dlopen ---- */
static struct {
  pti_result (*subscribe)(pti_callback_subscriber*, pti_callback_function, void*);
  pti_result (*unsubscribe)(pti_callback_subscriber);
  pti_result (*enable_domain)(uint32_t, pti_callback_subscriber, pti_callback_domain);
  pti_result (*enable)(uint32_t, pti_callback_subscriber, pti_api_group_id, pti_api_id);
  pti_result (*set_callbacks)(pti_fptr_buffer_requested, pti_fptr_buffer_completed);
  pti_result (*view_enable)(pti_view_kind);
  pti_result (*flush)(void);
  pti_result (*next_record)(uint8_t*, size_t, pti_view_record_base**);
  pti_result (*dropped)(pti_view_kind, uint64_t*);
  pti_result (*pending)(uint64_t*);
  pti_result (*intercepted)(pti_api_group_id, uint32_t*);
  pti_result (*critical_count)(pti_result, uint64_t*);
  pti_result (*simulate)(pti_api_group_id, uint32_t, const void*, const char*, pti_backend_ctx_t,
                         pti_simulated_call_body, void*, int32_t*);
  const char* (*name)(pti_result);
} pti;

static void* must_sym(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "libpti lacks %s\n", name);
    exit(2);
  }
  return f;
}

static void load_pti(void) {
  const char* path = getenv("PTI_LIBRARY");
  void* lib = dlopen(path ? path : "libpti.so.0", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    fprintf(stderr, "cannot load libpti: %s\n", dlerror());
    exit(2);
  }
  *(void**)&pti.subscribe = must_sym(lib, "ptiCallbackSubscribe");
  *(void**)&pti.unsubscribe = must_sym(lib, "ptiCallbackUnsubscribe");
  *(void**)&pti.enable_domain = must_sym(lib, "ptiCallbackEnableDomain");
  *(void**)&pti.enable = must_sym(lib, "ptiCallbackEnable");
  *(void**)&pti.set_callbacks = must_sym(lib, "ptiViewSetCallbacks");
  *(void**)&pti.view_enable = must_sym(lib, "ptiViewEnable");
  *(void**)&pti.flush = must_sym(lib, "ptiFlushAllViews");
  *(void**)&pti.next_record = must_sym(lib, "ptiViewGetNextRecord");
  *(void**)&pti.dropped = must_sym(lib, "ptiViewGetDroppedRecordCount");
  *(void**)&pti.pending = must_sym(lib, "ptiViewGetPendingDeviceRecordCount");
  *(void**)&pti.intercepted = must_sym(lib, "ptiGetInterceptedFunctionCount");
  *(void**)&pti.critical_count = must_sym(lib, "ptiCallbackGetCriticalEventCount");
  *(void**)&pti.simulate = must_sym(lib, "ptiSimulateApiCall");
  *(void**)&pti.name = must_sym(lib, "ptiResultTypeToString");
}

/* ---- the tool ---- */
static int callbacks, criticals_not_initialized;
static uint64_t records[32]; /* by view kind */
static char last_critical[512];

static void on_callback(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                        uint32_t api_id, void* cb_data) {
  (void)user_data, (void)group, (void)api_id;
  if (domain == PTI_DOMAIN_PTI_CRITICAL_EVENT) {
    pti_critical_event_callback_data* e = cb_data;
    printf("critical %s: %s\n", pti.name(e->_pti_event), e->_message);
    if (e->_pti_event == PTI_ERROR_TRACING_NOT_INITIALIZED) {
      criticals_not_initialized++;
      snprintf(last_critical, sizeof last_critical, "%s", e->_message);
    }
    return;
  }
  callbacks++;
}

static void requested(unsigned char** buf, size_t* size) {
  *size = 1 << 16;
  *buf = malloc(*size);
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* rec = NULL;
  while (pti.next_record(buf, used, &rec) == PTI_SUCCESS)
    if (rec->_view_kind < 32) records[rec->_view_kind]++;
  free(buf);
}

static const pti_view_kind all_kinds[] = {
    PTI_VIEW_DEVICE_GPU_KERNEL,     PTI_VIEW_DEVICE_CPU_KERNEL,    PTI_VIEW_DRIVER_API,
    PTI_VIEW_COLLECTION_OVERHEAD,   PTI_VIEW_RUNTIME_API,          PTI_VIEW_EXTERNAL_CORRELATION,
    PTI_VIEW_DEVICE_GPU_MEM_COPY,   PTI_VIEW_DEVICE_GPU_MEM_FILL,  PTI_VIEW_DEVICE_SYNCHRONIZATION,
    PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P,
};
#define N_KINDS (sizeof all_kinds / sizeof *all_kinds)

static uint64_t dropped_total(void) {
  uint64_t sum = 0;
  for (size_t i = 0; i < N_KINDS; i++) {
    uint64_t n = 0;
    REQUIRE(pti.dropped(all_kinds[i], &n) == PTI_SUCCESS);
    sum += n;
  }
  return sum;
}

/* Subscribes to critical events only; returns the subscriber. */
static pti_callback_subscriber listen_critical(void) {
  pti_callback_subscriber sub = NULL;
  REQUIRE(pti.subscribe(&sub, on_callback, NULL) == PTI_SUCCESS);
  REQUIRE(pti.enable_domain(1, sub, PTI_DOMAIN_PTI_CRITICAL_EVENT) == PTI_SUCCESS);
  return sub;
}

/* ---- OpenCL, through dlopen of the loader ---- */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef void* cl_id;
static struct {
  void* lib;
  cl_int (*get_platforms)(cl_uint, cl_id*, cl_uint*);
  cl_int (*get_platform_info)(cl_id, cl_uint, size_t, void*, size_t*);
  cl_int (*get_devices)(cl_id, uint64_t, cl_uint, cl_id*, cl_uint*);
  cl_id (*create_context)(const intptr_t*, cl_uint, const cl_id*, void*, void*, cl_int*);
  cl_id (*create_queue)(cl_id, cl_id, uint64_t, cl_int*);
  cl_id (*create_buffer)(cl_id, uint64_t, size_t, void*, cl_int*);
  cl_int (*write)(cl_id, cl_id, cl_uint, size_t, size_t, const void*, cl_uint, const cl_id*, cl_id*);
  cl_int (*finish)(cl_id);
  cl_int (*flush)(cl_id);
  cl_int (*release)(cl_id);
} cl;

static int open_opencl(void) {
  cl.lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cl.lib) return 0;
  *(void**)&cl.get_platforms = dlsym(cl.lib, "clGetPlatformIDs");
  *(void**)&cl.get_platform_info = dlsym(cl.lib, "clGetPlatformInfo");
  *(void**)&cl.get_devices = dlsym(cl.lib, "clGetDeviceIDs");
  *(void**)&cl.create_context = dlsym(cl.lib, "clCreateContext");
  *(void**)&cl.create_queue = dlsym(cl.lib, "clCreateCommandQueue");
  *(void**)&cl.create_buffer = dlsym(cl.lib, "clCreateBuffer");
  *(void**)&cl.write = dlsym(cl.lib, "clEnqueueWriteBuffer");
  *(void**)&cl.finish = dlsym(cl.lib, "clFinish");
  *(void**)&cl.flush = dlsym(cl.lib, "clFlush");
  *(void**)&cl.release = dlsym(cl.lib, "clReleaseMemObject");
  return 1;
}

/* The PoCL platform's first device, or exits. */
static cl_id pocl_device(void) {
  cl_id platforms[8];
  cl_uint n = 0;
  if (cl.get_platforms(8, platforms, &n) != 0 || n == 0) {
    fprintf(stderr, "no OpenCL platform\n");
    exit(2);
  }
  for (cl_uint i = 0; i < n && i < 8; i++) {
    char name[128] = {0};
    cl.get_platform_info(platforms[i], 0x0902 /* CL_PLATFORM_NAME */, sizeof name - 1, name, NULL);
    cl_id dev = NULL;
    if (strstr(name, "Portable Computing Language") &&
        cl.get_devices(platforms[i], 0xFFFFFFFF /* ALL */, 1, &dev, NULL) == 0)
      return dev;
  }
  fprintf(stderr, "PoCL is not among the OpenCL platforms\n");
  exit(2);
}

/* `n` non-blocking writes of 1 MiB on a profiling queue, submitted (clFlush) but not waited for. */
static void writes_left_running(int n) {
  cl_id dev = pocl_device();
  cl_int err = 0;
  cl_id ctx = cl.create_context(NULL, 1, &dev, NULL, NULL, &err);
  REQUIRE(err == 0 && ctx);
  cl_id queue = cl.create_queue(ctx, dev, 2 /* CL_QUEUE_PROFILING_ENABLE */, &err);
  REQUIRE(err == 0 && queue);
  static char host[1 << 20];
  cl_id buf = cl.create_buffer(ctx, 1 /* READ_WRITE */, sizeof host, NULL, &err);
  REQUIRE(err == 0 && buf);
  for (int i = 0; i < n; i++) REQUIRE(cl.write(queue, buf, 0, 0, sizeof host, host, 0, NULL, NULL) == 0);
  REQUIRE(cl.flush(queue) == 0);
}

static int dlclose_scenario(void) {
  load_pti();
  listen_critical();
  pti_callback_subscriber sub = NULL;
  REQUIRE(pti.subscribe(&sub, on_callback, NULL) == PTI_SUCCESS);
  REQUIRE(pti.enable(1, sub, PTI_API_GROUP_OPENCL, clEnqueueWriteBuffer_id) == PTI_SUCCESS);
  REQUIRE(pti.set_callbacks(requested, completed) == PTI_SUCCESS);
  REQUIRE(pti.view_enable(PTI_VIEW_DRIVER_API) == PTI_SUCCESS);
  REQUIRE(pti.view_enable(PTI_VIEW_DEVICE_GPU_MEM_COPY) == PTI_SUCCESS);
  for (int round = 0; round < 2; round++) {
    if (!open_opencl()) {
      fprintf(stderr, "cannot load libOpenCL.so.1: %s\n", dlerror());
      return 2;
    }
    int before = callbacks;
    writes_left_running(8);
    REQUIRE(callbacks - before == 16); /* ENTER and EXIT of each write: traced */
    usleep(100 * 1000); /* most writes finish meanwhile; the others stay pending, counted */
    REQUIRE(dlclose(cl.lib) == 0);
    memset(&cl, 0, sizeof cl);
    /* The loader is closed: the flush harvests the writes through what stays mapped. */
    REQUIRE(pti.flush() == PTI_SUCCESS);
  }
  uint64_t pending = 99;
  REQUIRE(pti.pending(&pending) == PTI_SUCCESS);
  uint64_t copies = records[PTI_VIEW_DEVICE_GPU_MEM_COPY], dropped = dropped_total();
  printf("dlclose: %d callbacks, %llu API records, %llu copy records, %llu pending, %llu dropped\n",
         callbacks, (unsigned long long)records[PTI_VIEW_DRIVER_API], (unsigned long long)copies,
         (unsigned long long)pending, (unsigned long long)dropped);
  /* Every write is a record, or still pending (its work unfinished), or dropped and counted. */
  REQUIRE(copies + pending + dropped == 16);
  REQUIRE(records[PTI_VIEW_DRIVER_API] >= 16);
  return 0;
}

/* Subscribes for callbacks, and asks for the OpenCL function `id` as a tool would once OpenCL
 * can no longer be traced: the enable must say so. Returns the subscriber. */
static pti_callback_subscriber enable_refused(const char* scenario, uint32_t id) {
  pti_callback_subscriber sub = NULL;
  REQUIRE(pti.subscribe(&sub, on_callback, NULL) == PTI_SUCCESS);
  pti_result r = pti.enable(1, sub, PTI_API_GROUP_OPENCL, id);
  printf("%s: enabling OpenCL returned %s\n", scenario, pti.name(r));
  REQUIRE(r == PTI_ERROR_TRACING_NOT_INITIALIZED);
  return sub;
}

static int late_scenario(void) {
  if (!open_opencl()) {
    fprintf(stderr, "cannot load libOpenCL.so.1: %s\n", dlerror());
    return 2;
  }
  writes_left_running(1);
  REQUIRE(cl.finish != NULL);
  load_pti(); /* now: OpenCL is initialised and its worker threads run */
  listen_critical();
  pti_callback_subscriber sub = enable_refused("late", clEnqueueWriteBuffer_id);
  REQUIRE(pti.enable_domain(1, sub, PTI_DOMAIN_DRIVER_API) == PTI_SUCCESS); /* not OpenCL only */
  REQUIRE(pti.set_callbacks(requested, completed) == PTI_SUCCESS);
  REQUIRE(pti.view_enable(PTI_VIEW_DRIVER_API) == PTI_SUCCESS);
  writes_left_running(4); /* runs, untraced */
  REQUIRE(pti.flush() == PTI_SUCCESS);
  REQUIRE(callbacks == 0);
  REQUIRE(records[PTI_VIEW_DRIVER_API] == 0);
  uint32_t intercepted = 99;
  REQUIRE(pti.intercepted(PTI_API_GROUP_OPENCL, &intercepted) == PTI_SUCCESS && intercepted == 0);
  REQUIRE(criticals_not_initialized == 1);
  REQUIRE(strstr(last_critical, "OPENCL_LAYERS") != NULL);
  uint64_t raised = 0;
  REQUIRE(pti.critical_count(PTI_ERROR_TRACING_NOT_INITIALIZED, &raised) == PTI_SUCCESS && raised == 1);
  return 0;
}

/* Threads of this process, from /proc. */
static int threads(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "Threads:", 8)) n = atoi(line + 8);
  if (f) fclose(f);
  return n;
}

static int late_alone_scenario(void) {
  if (!open_opencl()) {
    fprintf(stderr, "cannot load libOpenCL.so.1: %s\n", dlerror());
    return 2;
  }
  cl_uint n = 0;
  REQUIRE(cl.get_platforms(0, NULL, &n) == 0 && n > 0);
  printf("late-alone: %u platforms, %d thread(s) when libpti is loaded\n", n, threads());
  if (threads() != 1) {
    fprintf(stderr, "the OpenCL runtime started threads: this scenario tests nothing\n");
    return 2;
  }
  load_pti();
  REQUIRE(getenv("OPENCL_LAYERS") != NULL); /* the constructor ran alone and set it */
  listen_critical();
  enable_refused("late-alone", clGetPlatformIDs_id);
  REQUIRE(cl.get_platforms(0, NULL, &n) == 0); /* runs, untraced */
  REQUIRE(callbacks == 0);
  REQUIRE(criticals_not_initialized == 1);
  REQUIRE(strstr(last_critical, "had read it already") != NULL);
  return 0;
}

static int32_t body(void* user_data) { return *(int32_t*)user_data; }

static int missing_scenario(void) {
  load_pti();
  void* opencl = dlopen("libOpenCL.so.1", RTLD_NOW);
  void* ze = dlopen("libze_loader.so.1", RTLD_NOW);
  printf("missing: libOpenCL.so.1 %s, libze_loader.so.1 %s\n", opencl ? "loads" : "absent",
         ze ? "loads" : "absent");
  if (opencl || ze) {
    fprintf(stderr, "the runtimes were not hidden: this scenario tests nothing\n");
    return 2;
  }
  listen_critical();
  pti_callback_subscriber sub = NULL;
  REQUIRE(pti.subscribe(&sub, on_callback, NULL) == PTI_SUCCESS);
  REQUIRE(pti.enable_domain(1, sub, PTI_DOMAIN_DRIVER_API) == PTI_SUCCESS);
  REQUIRE(pti.enable_domain(1, sub, PTI_DOMAIN_RUNTIME_API) == PTI_SUCCESS);
  REQUIRE(pti.enable(1, sub, PTI_API_GROUP_LEVELZERO, zeCommandListAppendLaunchKernel_id) == PTI_SUCCESS);
  REQUIRE(pti.enable(1, sub, PTI_API_GROUP_OPENCL, clEnqueueNDRangeKernel_id) == PTI_SUCCESS);
  REQUIRE(pti.enable(1, sub, PTI_API_GROUP_SYCL, urEnqueueKernelLaunch_id) == PTI_SUCCESS);
  REQUIRE(pti.set_callbacks(requested, completed) == PTI_SUCCESS);
  for (size_t i = 0; i < N_KINDS; i++) REQUIRE(pti.view_enable(all_kinds[i]) == PTI_SUCCESS);
  const pti_api_group_id groups[] = {PTI_API_GROUP_LEVELZERO, PTI_API_GROUP_OPENCL, PTI_API_GROUP_SYCL};
  for (int g = 0; g < 3; g++) {
    uint32_t n = 99;
    REQUIRE(pti.intercepted(groups[g], &n) == PTI_SUCCESS && n == 0);
  }
  /* The engine still works: a simulated call is traced and recorded. */
  int32_t value = 4, status = 0;
  REQUIRE(pti.simulate(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, body, &value, &status) ==
          PTI_SUCCESS);
  REQUIRE(status == 4);
  REQUIRE(pti.flush() == PTI_SUCCESS);
  REQUIRE(callbacks == 0 || callbacks == 2); /* clFinish is not among the enabled IDs */
  REQUIRE(records[PTI_VIEW_DRIVER_API] == 1);
  REQUIRE(dropped_total() == 0);
  REQUIRE(pti.unsubscribe(sub) == PTI_SUCCESS);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lifecycle dlclose|late|late-alone|missing\n");
    return 2;
  }
  int rc = !strcmp(argv[1], "dlclose")  ? dlclose_scenario()
           : !strcmp(argv[1], "late")   ? late_scenario()
           : !strcmp(argv[1], "late-alone") ? late_alone_scenario()
           : !strcmp(argv[1], "missing") ? missing_scenario()
                                         : 2;
  if (rc == 0 && failures == 0) printf("lifecycle %s: ok\n", argv[1]);
  return rc ? rc : failures != 0;
}
