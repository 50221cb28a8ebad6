/* A tool on libpti in a program whose OpenCL loader cannot load layers: its first flush must
 * raise the critical event that says OpenCL is not traced, naming the loader. Prints
 * "layerless loader reported" when it did. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pti/pti_callback.h"
#include "pti/pti_view.h"

int32_t clGetPlatformIDs(uint32_t num_entries, void** platforms, uint32_t* num_platforms);

static int reported;

static void on_event(void* user_data, pti_callback_domain domain, pti_api_group_id group,
                     uint32_t api_id, void* cb_data) {
  (void)user_data, (void)group, (void)api_id;
  if (domain != PTI_DOMAIN_PTI_CRITICAL_EVENT) return;
  pti_critical_event_callback_data* e = cb_data;
  printf("critical %d: %s\n", (int)e->_pti_event, e->_message);
  if (e->_pti_event == PTI_ERROR_TRACING_NOT_INITIALIZED && strstr(e->_message, "libOpenCL.so") &&
      strstr(e->_message, "cannot load layers"))
    reported++;
}

int main(void) {
  pti_callback_subscriber sub;
  if (ptiCallbackSubscribe(&sub, on_event, NULL) != PTI_SUCCESS) return 2;
  if (ptiCallbackEnableDomain(1, sub, PTI_DOMAIN_PTI_CRITICAL_EVENT) != PTI_SUCCESS) return 2;
  uint32_t n = 7;
  if (clGetPlatformIDs(0, NULL, &n) != -1001 || n != 0) return 3;
  if (ptiFlushAllViews() != PTI_SUCCESS) return 4;
  if (ptiFlushAllViews() != PTI_SUCCESS) return 4; /* said once, not at every flush */
  ptiCallbackUnsubscribe(sub);
  if (reported == 1) printf("layerless loader reported\n");
  return reported == 1 ? 0 : 1;
}
