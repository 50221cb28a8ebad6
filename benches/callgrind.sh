#!/bin/sh
# The noise-free instrument of issue 21: the overhead benchmark's launch loop (benches/cl_loop.c)
# on PoCL, counted in instructions by valgrind's callgrind instead of timed, so that a change of a
# few percent in what libpti adds per launch shows on these 2-core machines, where wall-clock
# ratios on PoCL drift by up to 20% between runs of the same code.
#
#   benches/callgrind.sh [runs] [launches] [modes...]   (defaults: 5 runs, 2048 launches,
#                                                        modes none floor idle callbacks views)
#
# What makes the counts repeat:
# - one PoCL worker thread (POCL_MAX_PTHREAD_COUNT=1), so no work is shared out differently;
# - a clFinish every 64 launches (CL_LOOP_SYNC), far below libpti's harvest threshold, so
#   every harvest comes after the program's wait and no poll finds a command still running;
# - PoCL's kernel cache warmed by one run under valgrind without a tool (PoCL keys the cache by
#   the CPU features it sees, and valgrind's CPU has fewer than the real one), so no counted run
#   compiles the kernel (which would be outside the counted loop anyway);
# - collection only inside the timed loop (callgrind --toggle-collect=timed_loop), after a
#   warm-up loop of 256 launches that is not counted.
# Per mode it prints the instructions per launch of each run, their spread ((max-min)/median),
# and the median's excess over the untraced mode (none). The environment chooses the libpti
# build (PTI_LIB_DIR, default target/release) and may pass PTI_* switches through.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${PTI_BENCH_DIR:-$root/target/bench}
lib=$(cd "${PTI_LIB_DIR:-$root/target/release}" && pwd)
runs=${1:-5}
launches=${2:-2048}
shift 2 2>/dev/null || shift $#
modes=${*:-none floor idle callbacks views}
[ -e "$lib/libpti.so.0" ] || { echo "callgrind.sh: no libpti.so.0 in $lib" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed (cargo xtask setup installs it)" >&2; exit 2; }
mkdir -p "$out/callgrind"
cc -std=c11 -O2 -g -Wall -Werror "$root/benches/cl_loop.c" -o "$out/cl_loop" -lOpenCL
cc -std=c11 -O2 -Wall -Werror -shared -fPIC -I"$root/include" "$root/benches/bench_tool.c" \
  -o "$out/bench_tool.so" -L"$lib" -Wl,-rpath,"$lib" -lpti

export PTI_TEST_PLATFORM=Portable POCL_MAX_PTHREAD_COUNT=1 CL_LOOP_SYNC=64
export POCL_CACHE_DIR="$out/callgrind/pocl-cache"
valgrind --tool=none -q "$out/cl_loop" launch 64 64 >"$out/callgrind/warm.log" 2>&1 || { cat "$out/callgrind/warm.log" >&2; exit 1; }

# One run of one mode: prints the instructions collected per launch.
count() {
  mode=$1 file="$out/callgrind/$1.out"
  set -- env PTI_LEVEL_ZERO=0 PTI_SYCL=0
  case $mode in
    none) ;;
    floor) set -- "$@" CL_LOOP_TIMED=1 ;;
    *) set -- "$@" LD_PRELOAD="$lib/libpti.so.0:$out/bench_tool.so" PTI_BENCH_MODE="$mode" ;;
  esac
  "$@" valgrind --tool=callgrind --callgrind-out-file="$file" --collect-atstart=no \
    --toggle-collect='timed_loop*' "$out/cl_loop" launch "$launches" 256 >"$out/callgrind/$mode.log" 2>&1 ||
    { cat "$out/callgrind/$mode.log" >&2; exit 1; }
  total=$(sed -n 's/^summary: *//p' "$file")
  echo "$total $launches" | awk '{ printf "%.1f\n", $1 / $2 }'
}

echo "callgrind.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), PoCL (one thread), libpti from $lib"
echo "$runs runs of $launches launches each, a clFinish every 64; instructions per launch"
echo "| mode | runs | median | spread | added to none |"
echo "| --- | --- | --- | --- | --- |"
base=""
for mode in $modes; do
  values=""
  for _ in $(seq "$runs"); do values="$values $(count "$mode")"; done
  row=$(echo "$values" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk -v base="$base" '
    { v[NR] = $1 }
    END {
      med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      spread = (v[NR] - v[1]) / med * 100
      added = base == "" ? "-" : sprintf("%+.1f (%+.1f%%)", med - base, (med - base) / base * 100)
      printf "%.1f | %.2f%% | %s", med, spread, added
    }')
  [ -n "$base" ] || base=${row%% *}
  echo "| $mode |$values | $row |"
done
