/* A tool that counts the memory-copy records libpti delivers (`recorded`): buffers of 64 KiB,
 * walked and freed as each is handed back. Register it with
 * ptiViewSetCallbacks(requested, completed). */
#ifndef PTI_TEST_COUNT_COPIES_H
#define PTI_TEST_COUNT_COPIES_H

#include <stdlib.h>

#include "pti/pti_view.h"

static unsigned long long recorded;

static void requested(unsigned char** buf, size_t* size) {
  *size = 1 << 16;
  *buf = aligned_alloc(8, *size);
  if (!*buf) *size = 0;
}

static void completed(unsigned char* buf, size_t size, size_t used) {
  (void)size;
  pti_view_record_base* r = NULL;
  while (ptiViewGetNextRecord(buf, used, &r) == PTI_SUCCESS && r)
    if (r->_view_kind == PTI_VIEW_DEVICE_GPU_MEM_COPY) recorded++;
  free(buf);
}

#endif /* PTI_TEST_COUNT_COPIES_H */
