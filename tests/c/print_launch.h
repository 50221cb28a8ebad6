/* One line per kernel-launch record (libpti's PTI_VIEW_EXT_KERNEL_LAUNCH), for the test tools:
 *   T LAUNCH <kernel id> <dims> <groups x,y,z> <group size x,y,z> <global size x,y,z> */
#ifndef PRINT_LAUNCH_H
#define PRINT_LAUNCH_H

#include <stdio.h>

#include "pti/pti_ext.h"

static void print_launch(const pti_view_record_kernel_launch* l) {
  printf("T LAUNCH %llu %u %u,%u,%u %u,%u,%u %llu,%llu,%llu\n", (unsigned long long)l->_kernel_id, l->_work_dim,
         l->_group_count[0], l->_group_count[1], l->_group_count[2], l->_group_size[0], l->_group_size[1],
         l->_group_size[2], (unsigned long long)l->_global_size[0], (unsigned long long)l->_global_size[1],
         (unsigned long long)l->_global_size[2]);
}

#endif
