#!/bin/sh
# The overhead benchmark (issue #8), one command: builds the loop programs and runs
# benches/overhead.py on OpenCL (PoCL here, NVIDIA's OpenCL on a GPU machine) and, where nvcc,
# CUPTI and an NVIDIA GPU are present, on CUDA with CUPTI. docs/BENCHMARKS.md has the results.
#
#   benches/overhead.sh          full run (7 rounds; a few minutes)
#   benches/overhead.sh quick    one short round of each (a smoke test; `cargo xtask test` runs it)
#   benches/overhead.sh launch   the launch loops only (OpenCL with its floor, and CUDA)
#   benches/overhead.sh patterns the OpenCL launch loop in each program pattern against that
#                                pattern's floor (issue 39), the program's own latencies and
#                                durations (latency), the conversion's error against ground truth
#                                (anchor: anchor_error.py) and the cost of attaching (attach:
#                                attach.py); PTI_BENCH_PATTERNS narrows them (default: sync1 sync64
#                                sync1024 stream threads ooo events latency anchor attach) or adds
#                                copy: blocking writes, each the program's wait ($PTI_BENCH_COPIES
#                                of them, default 5000)
#
# libpti comes from $PTI_LIB_DIR (a directory with libpti.so.0), else `cargo xtask bench` has
# built target/release. $PTI_TEST_PLATFORM picks the OpenCL platform (default: NVIDIA where
# NVIDIA's OpenCL driver is installed, else PoCL); $PTI_BENCH_ROUNDS overrides the rounds,
# $PTI_BENCH_LAUNCHES the launches (warm-up: a tenth), and $PTI_BENCH_VARIANTS adds overhead.py
# --variant arguments (space-separated) to the OpenCL launch loop: libpti's switches, or another
# build (LIB=dir), run interleaved with the other modes; $PTI_BENCH_MODES (e.g. a,d,f) keeps only
# those of its modes. A variant that names a copy of the build under test (LIB=dir) measures the
# instrument's own noise: on the H200 two copies of one build differed by up to 4.5 points of
# views/floor at 21 rounds (docs/BENCHMARKS.md, issue 39, eighth pass).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${PTI_BENCH_DIR:-$root/target/bench}
lib=${PTI_LIB_DIR:-$root/target/release}
mkdir -p "$out"
[ -e "$lib/libpti.so.0" ] || { echo "overhead.sh: no libpti.so.0 in $lib (run cargo xtask bench, or set PTI_LIB_DIR)" >&2; exit 2; }
lib=$(cd "$lib" && pwd)

if [ "${1:-}" = quick ]; then
  rounds=1 launches=2000 warm=200 copies=200 copy_warm=20
  # A smoke run checks that every mode runs and records what the loop did, not what it costs.
  smoke=--smoke
else
  rounds=${PTI_BENCH_ROUNDS:-7} launches=200000 warm=20000 copies=5000 copy_warm=500
fi
if [ -n "${PTI_BENCH_LAUNCHES:-}" ]; then
  launches=$PTI_BENCH_LAUNCHES warm=$((PTI_BENCH_LAUNCHES / 10))
fi
only_launch=""
memory=--memory
[ "${1:-}" = launch ] && only_launch=1 memory=""
smoke=${smoke:-}
variants=""
for v in ${PTI_BENCH_VARIANTS:-}; do variants="$variants --variant $v"; done
[ -z "${PTI_BENCH_MODES:-}" ] || variants="$variants --modes $PTI_BENCH_MODES"

cuda=${CUDA_HOME:-/usr/local/cuda}
# OpenCL headers and libOpenCL.so from the system, else from CUDA (the GPU machines have only those).
cl_flags=""
if ! echo '#include <CL/cl.h>' | cc -E - >/dev/null 2>&1 && [ -e "$cuda/include/CL/cl.h" ]; then
  cl_flags="-I$cuda/include -L$cuda/lib64"
fi
cc -std=c11 -O2 -Wall -Werror -pthread $cl_flags "$root/benches/cl_loop.c" -o "$out/cl_loop" -lOpenCL
cc -std=c11 -O2 -Wall -Werror -shared -fPIC -I"$root/include" "$root/benches/bench_tool.c" \
  -o "$out/bench_tool.so" -L"$lib" -Wl,-rpath,"$lib" -lpti

# NVIDIA's OpenCL driver, where it is installed but not registered (the GPU machines), goes to
# ocl-icd, which loads layers, ahead of CUDA's own libOpenCL.so.1, which does not.
nvidia_cl=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
platform=${PTI_TEST_PLATFORM:-Portable}
if [ -e "$nvidia_cl" ] && [ -z "${OCL_ICD_VENDORS:-}" ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  mkdir -p "$out/icd"
  echo "$nvidia_cl" > "$out/icd/nvidia.icd"
  export OCL_ICD_VENDORS="$out/icd"
  export LD_LIBRARY_PATH="/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  platform=${PTI_TEST_PLATFORM:-NVIDIA}
fi
export PTI_TEST_PLATFORM="$platform"
echo "overhead.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), OpenCL platform matching '$platform', libpti from $lib"

py="python3 $root/benches/overhead.py $smoke"
# overhead.py on the OpenCL loop program; its options follow.
opencl() {
  $py opencl --program "$out/cl_loop" --lib-dir "$lib" --tool "$out/bench_tool.so" --label "OpenCL ($platform)" "$@"
}
if [ "${1:-}" = patterns ]; then
  for pattern in ${PTI_BENCH_PATTERNS:-sync1 sync64 sync1024 stream threads ooo events latency anchor attach}; do
    case $pattern in
      copy) # Blocking calls only: each records its command as it returns.
        opencl --loop copy --n "${PTI_BENCH_COPIES:-$copies}" --warm $copy_warm --rounds $rounds $variants ;;
      latency) # The program's own measurements (clpeak's kernel-latency pattern): its floor is itself.
        opencl --loop latency --n $((launches / 10)) --warm $((warm / 10)) --rounds $rounds $variants ;;
      anchor)
        python3 "$root/benches/anchor_error.py" --program "$out/cl_loop" --tool "$out/bench_tool.so" --lib-dir "$lib" \
          --n $launches --rounds 3 --variant every:PTI_CLOCK_ANCHOR_NS=0 --variant 10ms:PTI_CLOCK_ANCHOR_NS=10000000 \
          ${PTI_BENCH_ANCHOR_VARIANTS:-} ;;
      attach)
        python3 "$root/benches/attach.py" --program "$out/cl_loop" --tool "$out/bench_tool.so" --lib-dir "$lib" --rounds 11 ;;
      *)
        opencl --loop launch --pattern "$pattern" --n $launches --warm $warm --rounds $rounds $variants ;;
    esac
  done
  exit 0
fi
opencl --loop launch --n $launches --warm $warm --rounds $rounds $memory $variants
[ -n "$only_launch" ] ||
opencl --loop copy --n $copies --warm $copy_warm --rounds $rounds

# The SYCL program, untraced and fully traced, where .venv has dpctl (cargo xtask setup makes it).
if [ -n "$only_launch" ]; then
  :
elif [ -x "$root/.venv/bin/python" ] && "$root/.venv/bin/python" -c 'import dpctl' 2>/dev/null; then
  if [ "${1:-}" = quick ]; then sycl_n=20 sycl_warm=5; else sycl_n=500 sycl_warm=50; fi
  $py sycl --program "$root/benches/sycl_loop.py" --venv "$root/.venv" --lib-dir "$lib" \
    --tool "$out/bench_tool.so" --label "SYCL (dpctl, Intel CPU OpenCL)" --n $sycl_n --warm $sycl_warm --rounds $rounds
else
  echo "overhead.sh: no .venv with dpctl here: the SYCL program is not timed"
fi

# CUDA with CUPTI, the reference, where it can run.
nvcc=$cuda/bin/nvcc
cupti=""
for d in "$cuda/extras/CUPTI" "$cuda"; do
  [ -e "$d/include/cupti.h" ] && { cupti=$d; break; }
done
if [ -x "$nvcc" ] && [ -n "$cupti" ] && nvidia-smi -L >/dev/null 2>&1; then
  cupti_lib=$(dirname "$(find "$cupti" "$cuda/lib64" -name 'libcupti.so*' 2>/dev/null | head -n 1)")
  "$nvcc" -O2 -arch=native -I"$cupti/include" "$root/benches/cuda_loop.cu" -o "$out/cuda_loop" \
    -L"$cupti_lib" -Xlinker -rpath -Xlinker "$cupti_lib" -lcupti
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)
  $py cuda --program "$out/cuda_loop" --label "CUDA + CUPTI ($gpu)" \
    --loop launch --n $launches --warm $warm --rounds $rounds $memory
  [ -n "$only_launch" ] ||
  $py cuda --program "$out/cuda_loop" --label "CUDA + CUPTI ($gpu)" \
    --loop copy --n $copies --warm $copy_warm --rounds $rounds
else
  echo "overhead.sh: no nvcc, CUPTI or NVIDIA GPU here: the CUPTI reference is measured on the GPU machine"
fi
