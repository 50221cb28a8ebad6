/* Client A of tests/c_abi.rs "two clients, one engine": a tool built against libpti's headers
 * (the proposal's Callback API). Its calls bind to libpti's own symbols (PTI_SYMBOL), so it reaches
 * libpti even when another library exporting the same C names was loaded first. It records the
 * correlation ID of every ENTER it receives. */
#include <stdint.h>

#include "pti/pti_callback.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"

#define MAX_IDS 64
static uint32_t ids[MAX_IDS];
static int n_ids;

static void on_call(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                    uint32_t api_id, void* cb_data) {
  (void)user_data, (void)group, (void)api_id;
  if (domain != PTI_DOMAIN_DRIVER_API) return;
  pti_apicall_callback_data* d = cb_data;
  if (d->_site == PTI_SITE_ENTER && n_ids < MAX_IDS) ids[n_ids++] = d->_correlation_id;
}

int client_a_start(void) {
  pti_callback_subscriber sub;
  if (ptiCallbackSubscribe(&sub, on_call, NULL) != PTI_SUCCESS) return 1;
  if (ptiCallbackEnable(1, sub, PTI_API_GROUP_OPENCL, clFinish_id) != PTI_SUCCESS) return 2;
  return 0;
}

/* One simulated clFinish through libpti's dispatch (the test backend). */
int client_a_call(void) {
  int32_t status = -1;
  return ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, NULL, NULL,
                            &status) == PTI_SUCCESS && status == 0 ? 0 : 1;
}

int client_a_ids(const uint32_t** out) {
  *out = ids;
  return n_ids;
}
