/* A test fixture: an OpenCL loader layer that counts the calls of some functions that reach the
 * runtime, to show that libpti makes each of the program's calls exactly once, also when a panic
 * inside libpti is caught (tests/fault_injection.rs). Put it below libpti: first in OPENCL_LAYERS
 * (the loader stacks the layers in their order, each on top of the one before; libpti appends
 * itself after what is there).
 *
 * It counts only functions that libpti never calls on its own (enqueues, waits, creations); the
 * rest pass through its table untouched. At exit it writes one line "<function> <count>" per
 * function to the file CL_COUNT_FILE names (if set). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct _cl_icd_dispatch next;  /* the layer below */
static struct _cl_icd_dispatch mine;  /* what the layer above calls */

enum {
  N_NDRANGE, N_READ, N_WRITE, N_COPY, N_FILL, N_READ_RECT, N_MAP, N_UNMAP, N_BARRIER, N_MARKER,
  N_FINISH, N_WAIT, N_QUEUE, N_QUEUE_PROPS, N_KERNEL, N_SET_ARG, N_BUFFER, N_COUNT
};
static const char* names[N_COUNT] = {
  "clEnqueueNDRangeKernel", "clEnqueueReadBuffer", "clEnqueueWriteBuffer", "clEnqueueCopyBuffer",
  "clEnqueueFillBuffer", "clEnqueueReadBufferRect", "clEnqueueMapBuffer",
  "clEnqueueUnmapMemObject", "clEnqueueBarrierWithWaitList", "clEnqueueMarkerWithWaitList",
  "clFinish", "clWaitForEvents", "clCreateCommandQueue", "clCreateCommandQueueWithProperties",
  "clCreateKernel", "clSetKernelArg", "clCreateBuffer"};
static atomic_ulong counts[N_COUNT];

#define COUNT(n) atomic_fetch_add_explicit(&counts[n], 1, memory_order_relaxed)

static cl_int CL_API_CALL ndrange(cl_command_queue q, cl_kernel k, cl_uint d, const size_t* o,
                                  const size_t* g, const size_t* l, cl_uint n, const cl_event* w,
                                  cl_event* e) {
  COUNT(N_NDRANGE);
  return next.clEnqueueNDRangeKernel(q, k, d, o, g, l, n, w, e);
}
static cl_int CL_API_CALL read_buffer(cl_command_queue q, cl_mem b, cl_bool blk, size_t off,
                                      size_t sz, void* p, cl_uint n, const cl_event* w,
                                      cl_event* e) {
  COUNT(N_READ);
  return next.clEnqueueReadBuffer(q, b, blk, off, sz, p, n, w, e);
}
static cl_int CL_API_CALL write_buffer(cl_command_queue q, cl_mem b, cl_bool blk, size_t off,
                                       size_t sz, const void* p, cl_uint n, const cl_event* w,
                                       cl_event* e) {
  COUNT(N_WRITE);
  return next.clEnqueueWriteBuffer(q, b, blk, off, sz, p, n, w, e);
}
static cl_int CL_API_CALL copy_buffer(cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t do_,
                                      size_t sz, cl_uint n, const cl_event* w, cl_event* e) {
  COUNT(N_COPY);
  return next.clEnqueueCopyBuffer(q, s, d, so, do_, sz, n, w, e);
}
static cl_int CL_API_CALL fill_buffer(cl_command_queue q, cl_mem b, const void* p, size_t ps,
                                      size_t off, size_t sz, cl_uint n, const cl_event* w,
                                      cl_event* e) {
  COUNT(N_FILL);
  return next.clEnqueueFillBuffer(q, b, p, ps, off, sz, n, w, e);
}
static cl_int CL_API_CALL read_rect(cl_command_queue q, cl_mem b, cl_bool blk, const size_t* bo,
                                    const size_t* ho, const size_t* r, size_t brp, size_t bsp,
                                    size_t hrp, size_t hsp, void* p, cl_uint n, const cl_event* w,
                                    cl_event* e) {
  COUNT(N_READ_RECT);
  return next.clEnqueueReadBufferRect(q, b, blk, bo, ho, r, brp, bsp, hrp, hsp, p, n, w, e);
}
static void* CL_API_CALL map_buffer(cl_command_queue q, cl_mem b, cl_bool blk, cl_map_flags f,
                                    size_t off, size_t sz, cl_uint n, const cl_event* w,
                                    cl_event* e, cl_int* err) {
  COUNT(N_MAP);
  return next.clEnqueueMapBuffer(q, b, blk, f, off, sz, n, w, e, err);
}
static cl_int CL_API_CALL unmap(cl_command_queue q, cl_mem m, void* p, cl_uint n,
                                const cl_event* w, cl_event* e) {
  COUNT(N_UNMAP);
  return next.clEnqueueUnmapMemObject(q, m, p, n, w, e);
}
static cl_int CL_API_CALL barrier(cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e) {
  COUNT(N_BARRIER);
  return next.clEnqueueBarrierWithWaitList(q, n, w, e);
}
static cl_int CL_API_CALL marker(cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e) {
  COUNT(N_MARKER);
  return next.clEnqueueMarkerWithWaitList(q, n, w, e);
}
static cl_int CL_API_CALL finish(cl_command_queue q) {
  COUNT(N_FINISH);
  return next.clFinish(q);
}
static cl_int CL_API_CALL wait_for(cl_uint n, const cl_event* w) {
  COUNT(N_WAIT);
  return next.clWaitForEvents(n, w);
}
static cl_command_queue CL_API_CALL queue(cl_context c, cl_device_id d,
                                          cl_command_queue_properties p, cl_int* err) {
  COUNT(N_QUEUE);
  return next.clCreateCommandQueue(c, d, p, err);
}
static cl_command_queue CL_API_CALL queue_props(cl_context c, cl_device_id d,
                                                const cl_queue_properties* p, cl_int* err) {
  COUNT(N_QUEUE_PROPS);
  return next.clCreateCommandQueueWithProperties(c, d, p, err);
}
static cl_kernel CL_API_CALL kernel(cl_program p, const char* name, cl_int* err) {
  COUNT(N_KERNEL);
  return next.clCreateKernel(p, name, err);
}
static cl_int CL_API_CALL set_arg(cl_kernel k, cl_uint i, size_t sz, const void* v) {
  COUNT(N_SET_ARG);
  return next.clSetKernelArg(k, i, sz, v);
}
static cl_mem CL_API_CALL buffer(cl_context c, cl_mem_flags f, size_t sz, void* p, cl_int* err) {
  COUNT(N_BUFFER);
  return next.clCreateBuffer(c, f, sz, p, err);
}

static void write_counts(void) {
  const char* path = getenv("CL_COUNT_FILE");
  FILE* f = path ? fopen(path, "w") : NULL;
  if (!f) return;
  for (int i = 0; i < N_COUNT; i++)
    fprintf(f, "%s %lu\n", names[i], atomic_load(&counts[i]));
  fclose(f);
}

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void* value,
                                               size_t* size_ret) {
  static const char layer_name[] = "libpti test: call counter";
  cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  const void* src;
  size_t n;
  switch (name) {
    case CL_LAYER_API_VERSION: src = &version, n = sizeof version; break;
    case CL_LAYER_NAME: src = layer_name, n = sizeof layer_name; break;
    default: return CL_INVALID_VALUE;
  }
  if (value) {
    if (size < n) return CL_INVALID_VALUE;
    memcpy(value, src, n);
  }
  if (size_ret) *size_ret = n;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries,
                                            const struct _cl_icd_dispatch* target,
                                            cl_uint* num_entries_ret,
                                            const struct _cl_icd_dispatch** layer_dispatch) {
  size_t entries = sizeof next / sizeof(void*);
  if (!target || !num_entries_ret || !layer_dispatch || num_entries < entries)
    return CL_INVALID_VALUE;
  memcpy(&next, target, sizeof next);
  memcpy(&mine, target, sizeof mine);
  mine.clEnqueueNDRangeKernel = ndrange;
  mine.clEnqueueReadBuffer = read_buffer;
  mine.clEnqueueWriteBuffer = write_buffer;
  mine.clEnqueueCopyBuffer = copy_buffer;
  mine.clEnqueueFillBuffer = fill_buffer;
  mine.clEnqueueReadBufferRect = read_rect;
  mine.clEnqueueMapBuffer = map_buffer;
  mine.clEnqueueUnmapMemObject = unmap;
  mine.clEnqueueBarrierWithWaitList = barrier;
  mine.clEnqueueMarkerWithWaitList = marker;
  mine.clFinish = finish;
  mine.clWaitForEvents = wait_for;
  mine.clCreateCommandQueue = queue;
  mine.clCreateCommandQueueWithProperties = queue_props;
  mine.clCreateKernel = kernel;
  mine.clSetKernelArg = set_arg;
  mine.clCreateBuffer = buffer;
  *num_entries_ret = (cl_uint)entries;
  *layer_dispatch = &mine;
  atexit(write_counts);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayerWithProperties(
    cl_uint num_entries, const struct _cl_icd_dispatch* target, cl_uint* num_entries_ret,
    const struct _cl_icd_dispatch** layer_dispatch, const cl_ulong* properties) {
  /* cl_layer_properties is a cl_properties (cl_ulong) list; Debian's older header lacks the name. */
  (void)properties;
  return clInitLayer(num_entries, target, num_entries_ret, layer_dispatch);
}

CL_API_ENTRY cl_int CL_API_CALL clDeinitLayer(void) { return CL_SUCCESS; }
