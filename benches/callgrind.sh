#!/bin/sh
# The noise-free instrument of issue 21: the overhead benchmark's launch loop (benches/cl_loop.c)
# on PoCL, counted in instructions by valgrind's callgrind instead of timed, so that a change of a
# few percent in what libpti adds per launch shows on these 2-core machines, where wall-clock
# ratios on PoCL drift by up to 20% between runs of the same code.
#
#   benches/callgrind.sh [runs] [launches] [modes...]   (defaults: 5 runs, 2048 launches,
#                                                        modes none floor idle callbacks views)
#   PTI_BENCH_PATTERNS="sync64 stream ..." benches/callgrind.sh ...   one table per pattern
#
# Patterns (issue 39; benches/cl_loop.c's environment), each with its own floor (mode floor: the
# same pattern timed by hand): sync64 (the default: a clFinish every 64 launches), sync1, sync1024,
# stream (no wait until the end), threads (2 threads, a queue each, a wait every 64), ooo (an
# out-of-order queue, a wait every 64), events (the program's own event per launch, released
# unread after each wait every 64). The counts are of the program's threads inside the loop
# (timed_loop and run_thread); libpti's own harvester thread is off by default. Mode minimal
# preloads benches/min_tracer.c instead of libpti: the least a tracer can do to hand a tool the
# same API and kernel records, a reference for libpti's own work (views minus floor).
#
# What makes the counts repeat:
# - one PoCL worker thread (POCL_MAX_PTHREAD_COUNT=1), so no work is shared out differently;
# - in the default pattern, a clFinish every 64 launches (CL_LOOP_SYNC), far below libpti's
#   harvest threshold, so every harvest comes after the program's wait and no poll finds a
#   command still running;
# - PoCL's kernel cache warmed by one run under valgrind without a tool (PoCL keys the cache by
#   the CPU features it sees, and valgrind's CPU has fewer than the real one), so no counted run
#   compiles the kernel (which would be outside the counted loop anyway);
# - the tool's buffers are small (PTI_BENCH_BUFFER_BYTES, 64 KiB, reused), so that the walks of its
#   buffers (ptiViewGetNextRecord) fall evenly into the counted loop: with 1 MiB, one walk more or
#   less in it moved a count by 200 to 400 instructions per launch between builds;
# - collection only inside the timed loop (callgrind --toggle-collect=timed_loop), after a
#   warm-up loop as long as it, not counted: the steady state of a long program (libpti's
#   lists have grown to what the pattern needs once, as in the first part of any long run).
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
cc -std=c11 -O2 -g -Wall -Werror -pthread "$root/benches/cl_loop.c" -o "$out/cl_loop" -lOpenCL
cc -std=c11 -O2 -Wall -Werror -shared -fPIC -I"$root/include" "$root/benches/bench_tool.c" \
  -o "$out/bench_tool.so" -L"$lib" -Wl,-rpath,"$lib" -lpti
cc -std=c11 -O2 -Wall -Werror -shared -fPIC -I"$root/include" "$root/benches/min_tracer.c" \
  -o "$out/min_tracer.so" -ldl

export PTI_TEST_PLATFORM=Portable POCL_MAX_PTHREAD_COUNT=1
export POCL_CACHE_DIR="$out/callgrind/pocl-cache"
valgrind --tool=none -q "$out/cl_loop" launch 64 64 >"$out/callgrind/warm.log" 2>&1 || { cat "$out/callgrind/warm.log" >&2; exit 1; }

# The environment of a pattern.
pattern_env() {
  case $1 in
    sync64) echo CL_LOOP_SYNC=64 ;;
    sync1) echo CL_LOOP_SYNC=1 ;;
    sync1024) echo CL_LOOP_SYNC=1024 ;;
    stream) echo CL_LOOP_SYNC=0 ;;
    threads) echo CL_LOOP_SYNC=64 CL_LOOP_THREADS=2 ;;
    ooo) echo CL_LOOP_SYNC=64 CL_LOOP_OOO=1 ;;
    events) echo CL_LOOP_SYNC=64 CL_LOOP_EVENTS=1 ;;
    *) echo "callgrind.sh: no pattern $1" >&2; exit 2 ;;
  esac
}

# One run of one mode: prints the instructions collected per launch.
count() {
  mode=$1 file="$out/callgrind/$pattern.$1.out"
  # shellcheck disable=SC2046 # the pattern's variables are words
  set -- env PTI_LEVEL_ZERO=0 PTI_SYCL=0 $(pattern_env "$pattern")
  case $mode in
    none) ;;
    floor) set -- "$@" CL_LOOP_TIMED=1 ;;
    minimal) set -- "$@" LD_PRELOAD="$out/min_tracer.so" ;;
    *) set -- "$@" LD_PRELOAD="$lib/libpti.so.0:$out/bench_tool.so" PTI_BENCH_MODE="$mode" \
      PTI_BENCH_BUFFER_BYTES=65536 ;;
  esac
  "$@" valgrind --tool=callgrind --callgrind-out-file="$file" --collect-atstart=no \
    --toggle-collect='timed_loop*' --toggle-collect='run_thread*' \
    "$out/cl_loop" launch "$launches" "$launches" >"$out/callgrind/$mode.log" 2>&1 ||
    { cat "$out/callgrind/$mode.log" >&2; exit 1; }
  # Every thread's file (threads pattern), summed.
  total=$(cat "$file"* | sed -n 's/^summary: *//p' | awk '{ s += $1 } END { print s }')
  rm -f "$file"-*
  echo "$total $launches" | awk '{ printf "%.1f\n", $1 / $2 }'
}

echo "callgrind.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), PoCL (one thread), libpti from $lib"
for pattern in ${PTI_BENCH_PATTERNS:-sync64}; do
echo "pattern $pattern ($(pattern_env "$pattern")): $runs runs of $launches launches each; instructions per launch"
echo "| mode | runs | median | spread | added to none | added to floor (libpti's own work) |"
echo "| --- | --- | --- | --- | --- | --- |"
base="" floorv=""
for mode in $modes; do
  values=""
  for _ in $(seq "$runs"); do values="$values $(count "$mode")"; done
  row=$(echo "$values" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk -v base="$base" -v floor="$floorv" '
    { v[NR] = $1 }
    END {
      med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      spread = (v[NR] - v[1]) / med * 100
      added = base == "" ? "-" : sprintf("%+.1f (%+.1f%%)", med - base, (med - base) / base * 100)
      over = floor == "" ? "-" : sprintf("%+.1f", med - floor)
      printf "%.1f | %.2f%% | %s | %s", med, spread, added, over
    }')
  [ -n "$base" ] || base=${row%% *}
  [ "$mode" != floor ] || floorv=${row%% *}
  echo "| $mode |$values | $row |"
done
done
