#!/bin/sh
# What libpti adds to the device's work and to Level Zero queries (issue 34), over the simulated
# driver: each scenario of tests/c/ze_gpu.c run alone (ze_gpu_plain) and traced (ze_gpu_traced),
# printing the driver's report (commands executed by kind; host queries of events) and the
# durations the program's own events report. docs/BENCHMARKS.md has the results.
#
#   benches/ze_device_work.sh
#
# The programs are those `cargo test -p pti-tests --test level_zero_gpu` builds into
# target/pti-tests; libpti comes from $PTI_LIB_DIR (a directory with libpti.so.0), else
# target/debug. Counts, not times: a loaded machine changes none of them but the durations'
# last digits (which follow the simulated kernels' own run times).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/target/pti-tests
lib=${PTI_LIB_DIR:-$root/target/debug}
sim=$root/target/debug/libze_sim.so
for f in "$bin/ze_gpu_plain" "$bin/ze_gpu_traced" "$sim"; do
  [ -e "$f" ] || { echo "$f is missing: run cargo test -p pti-tests --test level_zero_gpu" >&2; exit 2; }
done
report=$(mktemp)
trap 'rm -f "$report"' EXIT
run() { # scenario, program, extra environment...
  scenario=$1 program=$2
  shift 2
  rm -f "$report"
  output=$(env "$@" LD_LIBRARY_PATH="$lib" ZE_ENABLE_ALT_DRIVERS="$sim" ZE_SIM_REPORT="$report" \
    ZE_SIM_JITTER_NS=20000 ZE_SIM_SEED=1 "$bin/$program" "$scenario")
  own=$(printf '%s\n' "$output" | sed -n 's/^W OWN //p' | tr '\n' ' ')
  printf '%s %s\n  %s\n  %s\n  own: %s\n' "$scenario" "$program" \
    "$(grep EXECUTED "$report")" "$(grep CALLS "$report")" "$own"
}
for scenario in cb_chain ping_pong free_list own_timestamps graph regular_ooo pipelined mutable \
  late_timestamps tiles deep_stream; do
  case $scenario in
    late_timestamps) extra="ZE_SIM_TS_LAG_NS=30000000 ZE_SIM_TS_TIMEOUT_MS=1" ;;
    tiles) extra="ZE_SIM_TILES=2 ZE_FLAT_DEVICE_HIERARCHY=FLAT" ;;
    *) extra="" ;;
  esac
  # shellcheck disable=SC2086 # $extra holds whole NAME=value words
  run "$scenario" ze_gpu_plain $extra
  # shellcheck disable=SC2086
  run "$scenario" ze_gpu_traced $extra
done
