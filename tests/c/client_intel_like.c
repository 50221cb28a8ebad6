/* Client B of tests/c_abi.rs "two clients, one engine": a stand-in for the coming library with
 * Intel PTI's ABI. Like it, it exports ptiCallbackSubscribe and ptiCallbackEnableDomain with
 * Intel's signatures (a 7-argument callback; the subscriber first, then two on/off flags), and
 * it holds no engine: it reaches libpti through the libpti_ names, which only libpti exports, so
 * its own exports never answer its calls into the engine. It records the correlation ID of every
 * ENTER its (translated) subscription receives. It includes no libpti header: those declare the
 * proposal's functions under the names it redefines. */
#include <stdint.h>
#include <stdlib.h>

/* What it needs of libpti's ABI, by libpti's own symbols. */
typedef void (*proposal_callback)(void* user_data, uint32_t domain, uint32_t group, uint32_t api_id,
                                  void* cb_data);
extern uint32_t libpti_ptiCallbackSubscribe(void** subscriber, proposal_callback cb, void* user);
extern uint32_t libpti_ptiCallbackEnableDomain(uint32_t enable, void* subscriber, uint32_t domain);
struct proposal_data { /* pti_apicall_callback_data, up to the correlation ID */
  uint32_t site;
  const char* api_name;
  const void* args;
  const char* kernel_name;
  const void* return_code;
  void* context;
  uint32_t correlation_id;
};

/* Intel's shape of a callback (7 arguments). */
typedef void (*intel_callback)(uint32_t domain, uint32_t group, uint32_t api_id, void* backend_ctx,
                               void* cb_data, void* global_user_data, void** instance_user_data);

struct subscription {
  intel_callback cb;
  void* user;
  void* engine;
};

static void translate(void* user_data, uint32_t domain, uint32_t group, uint32_t api_id,
                      void* cb_data) {
  struct subscription* s = user_data;
  void* instance = NULL;
  struct proposal_data* d = cb_data;
  s->cb(domain == 1 ? 1023 /* Intel's DRIVER_API */ : domain, group, api_id, d->context, cb_data,
        s->user, &instance);
}

/* Intel's ptiCallbackSubscribe. */
uint32_t ptiCallbackSubscribe(void** subscriber, intel_callback cb, void* user) {
  struct subscription* s = calloc(1, sizeof *s);
  if (!s || !subscriber || !cb) return 3; /* PTI_ERROR_BAD_ARGUMENT */
  s->cb = cb, s->user = user;
  uint32_t r = libpti_ptiCallbackSubscribe(&s->engine, translate, s);
  if (r != 0) return r;
  *subscriber = s;
  return 0;
}

/* Intel's ptiCallbackEnableDomain: subscriber first, then enter/exit flags. */
uint32_t ptiCallbackEnableDomain(void* subscriber, uint32_t domain, uint32_t enter, uint32_t exit) {
  struct subscription* s = subscriber;
  (void)exit;
  return libpti_ptiCallbackEnableDomain(enter, s->engine, domain == 1023 ? 1 : domain);
}

#define MAX_IDS 64
static uint32_t ids[MAX_IDS];
static int n_ids;

static void on_call(uint32_t domain, uint32_t group, uint32_t api_id, void* backend_ctx,
                    void* cb_data, void* global_user_data, void** instance_user_data) {
  (void)domain, (void)group, (void)api_id, (void)backend_ctx, (void)global_user_data;
  (void)instance_user_data;
  struct proposal_data* d = cb_data;
  if (d->site == 1 /* ENTER */ && n_ids < MAX_IDS) ids[n_ids++] = d->correlation_id;
}

/* Subscribes the way an Intel-built tool does: by the plain names, which the dynamic linker
 * resolves to this library when it comes first. */
int client_b_start(void) {
  void* sub = NULL;
  if (ptiCallbackSubscribe(&sub, on_call, NULL) != 0) return 1;
  return ptiCallbackEnableDomain(sub, 1023, 1, 1) == 0 ? 0 : 2;
}

int client_b_ids(const uint32_t** out) {
  *out = ids;
  return n_ids;
}
