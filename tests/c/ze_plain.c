/* The Level Zero workload alone: no libpti linked. */
#include "ze_workload.h"

int main(void) { return ze_workload(); }
