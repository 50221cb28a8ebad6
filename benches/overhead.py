#!/usr/bin/env python3
"""The overhead benchmark's driver (issue #8; docs/BENCHMARKS.md says how to run it).

Runs one loop program in every mode, the modes interleaved within each round and the rounds
repeated, and prints, per mode, the median time per iteration and the median (min-max) of its
ratio to the untraced run of the same round. Every traced run's own report is checked: a mode
that traced less than the loop did fails the benchmark instead of looking cheap.

  overhead.py opencl --program cl_loop --lib-dir DIR --tool bench_tool.so [options]
  overhead.py cuda   --program cuda_loop [options]
  overhead.py sycl   --program sycl_loop.py --venv .venv --lib-dir DIR --tool bench_tool.so [options]
options: --loop launch|copy  --n ITERATIONS  --warm ITERATIONS  --rounds R  --memory
--memory adds the peak-memory check: mode (d) with --warm iterations of warm-up, timed over
--warm and over 10 x --warm iterations; the peak resident set should not grow with the length.
The OpenCL platform is chosen by the environment ($PTI_TEST_PLATFORM, $OCL_ICD_VENDORS)."""
import argparse
import os
import statistics
import subprocess
import sys

# (label, what the mode is) per backend; the first mode of each is the untraced reference.
OPENCL_MODES = [
    ("a", "none", "no libpti"),
    ("b", "idle", "libpti loaded, nothing enabled"),
    ("c", "callbacks", "every API callback on, empty subscriber"),
    ("d", "views", "API, kernel, copy and fill views, buffers consumed"),
    ("e", "both", "(c) and (d) together"),
]
CUDA_MODES = [
    ("a", "none", "no CUPTI"),
    ("c", "callbacks", "CUPTI callbacks, runtime and driver domains, empty callback"),
    ("d", "activity", "CUPTI activity: kernels, runtime calls, memcpy, memset"),
    ("e", "both", "(c) and (d) together"),
]


def opencl_run(args, mode, loop, n, warm):
    env = dict(os.environ)
    env.pop("OPENCL_LAYERS", None)
    env.pop("LD_PRELOAD", None)
    if mode != "none":
        lib = os.path.join(args.lib_dir, "libpti.so.0")
        env["LD_PRELOAD"] = f"{lib}:{os.path.abspath(args.tool)}"
        env["PTI_BENCH_MODE"] = mode
        # Only OpenCL is measured: the other backends stay out of the program.
        env["PTI_LEVEL_ZERO"] = "0"
        env["PTI_SYCL"] = "0"
    return run([args.program, loop, str(n), str(warm)], env, mode)


SYCL_MODES = [
    ("a", "none", "no libpti"),
    ("d", "views", "API (OpenCL and SYCL runtime), kernel, copy and fill views"),
    ("e", "both", "every callback and every view: fully traced"),
]


def sycl_run(args, mode, loop, n, warm):
    venv = os.path.abspath(args.venv)
    env = dict(os.environ)
    env["OCL_ICD_FILENAMES"] = os.path.join(venv, "lib", "libintelocl.so")
    env["LD_LIBRARY_PATH"] = os.path.join(venv, "lib")
    for var in ("OPENCL_LAYERS", "LD_PRELOAD", "XPTI_SUBSCRIBERS", "XPTI_TRACE_ENABLE",
                "XPTI_FRAMEWORK_DISPATCHER", "UR_ENABLE_LAYERS"):
        env.pop(var, None)
    if mode != "none":
        env["LD_PRELOAD"] = f"{os.path.join(args.lib_dir, 'libpti.so.0')}:{os.path.abspath(args.tool)}"
        env["PTI_BENCH_MODE"] = mode
        env["PTI_BENCH_SYCL"] = "1"
        env["PTI_LEVEL_ZERO"] = "0"
    return run([os.path.join(venv, "bin", "python"), args.program, str(n), str(warm)], env, mode)


def cuda_run(args, mode, loop, n, warm):
    return run([args.program, mode, loop, str(n), str(warm)], dict(os.environ), mode)


def run(cmd, env, mode):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{mode}: {' '.join(cmd)} exited with {out.returncode}\n{out.stdout}\n{out.stderr}")
    result = next((l.split() for l in out.stdout.splitlines() if l.startswith("RESULT")), None)
    tool = next((l.split() for l in out.stderr.splitlines() if l.startswith("BENCH_TOOL")), None)
    if result is None:
        sys.exit(f"{mode}: no RESULT line\n{out.stdout}\n{out.stderr}")
    counts = {tool[i]: int(tool[i + 1]) for i in range(1, len(tool) - 1, 2)} if tool else {}
    return float(result[1]), int(result[3]), counts


def check(mode, counts, n, backend):
    """A traced mode must have seen at least one call or record per iteration, and lost none."""
    if mode in ("none", "idle"):
        return
    if not counts:
        sys.exit(f"{mode}: the tool printed no BENCH_TOOL line")
    if mode in ("callbacks", "both") and counts["calls"] < n:
        sys.exit(f"{mode}: {counts['calls']} callbacks for {n} iterations")
    if mode in ("views", "activity", "both") and counts["records"] < n:
        sys.exit(f"{mode}: {counts['records']} records for {n} iterations")
    if counts.get("dropped", 0):
        sys.exit(f"{mode}: {counts['dropped']} records dropped ({backend})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("backend", choices=["opencl", "cuda", "sycl"])
    p.add_argument("--venv", default=".venv", help="the Python environment with dpctl (sycl)")
    p.add_argument("--program", required=True)
    p.add_argument("--lib-dir", help="directory of libpti.so.0 (opencl)")
    p.add_argument("--tool", help="bench_tool.so (opencl)")
    p.add_argument("--loop", choices=["launch", "copy"], default="launch")
    p.add_argument("--n", type=int, default=200000)
    p.add_argument("--warm", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--memory", action="store_true")
    p.add_argument("--label", default="")
    args = p.parse_args()
    if args.backend != "cuda" and not (args.lib_dir and args.tool):
        p.error(f"{args.backend} needs --lib-dir and --tool")
    modes, runner = {
        "opencl": (OPENCL_MODES, opencl_run),
        "cuda": (CUDA_MODES, cuda_run),
        "sycl": (SYCL_MODES, sycl_run),
    }[args.backend]

    times = {m: [] for _, m, _ in modes}
    ratios = {m: [] for _, m, _ in modes}
    for _ in range(args.rounds):
        for _, mode, _ in modes:
            t, _, counts = runner(args, mode, args.loop, args.n, args.warm)
            check(mode, counts, args.n, args.backend)
            times[mode].append(t)
        base = times[modes[0][1]][-1]
        for _, mode, _ in modes:
            ratios[mode].append(times[mode][-1] / base)

    loop = "workload" if args.backend == "sycl" else args.loop
    print(f"\n{args.label or args.backend}, {loop} loop: {args.n} iterations after {args.warm} of warm-up, "
          f"{args.rounds} rounds, modes interleaved")
    print("| mode | | median ns per iteration | median ratio to (a) | min-max ratio |")
    print("| --- | --- | --- | --- | --- |")
    for label, mode, what in modes:
        r = ratios[mode]
        print(f"| ({label}) {mode} | {what} | {statistics.median(times[mode]):.1f} | "
              f"{statistics.median(r):.3f} | {min(r):.3f}-{max(r):.3f} |")

    if args.memory:
        traced = "views" if args.backend == "opencl" else "activity"
        rows = []
        for mode in (modes[0][1], traced):
            for n in (args.warm, 10 * args.warm):
                _, rss, counts = runner(args, mode, args.loop, n, args.warm)
                check(mode, counts, n, args.backend)
                rows.append((mode, n, rss))
        print(f"\npeak resident set ({args.loop} loop, {args.warm} iterations of warm-up first)")
        print("| mode | timed iterations | peak RSS (KiB) |")
        print("| --- | --- | --- |")
        for mode, n, rss in rows:
            print(f"| {mode} | {n} | {rss} |")
        short, long = rows[2][2], rows[3][2]
        print(f"growth of {traced} from {args.warm} to {10 * args.warm} iterations: {long - short} KiB "
              f"({(long - short) / short * 100:.1f}%)")


if __name__ == "__main__":
    main()
