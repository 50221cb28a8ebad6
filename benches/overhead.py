#!/usr/bin/env python3
"""The overhead benchmark's driver (issue #8; docs/BENCHMARKS.md says how to run it).

Runs one loop program in every mode, the modes interleaved within each round and the rounds
repeated, and prints, per mode, the median time per iteration and the median (min-max) of its
ratio to the untraced run of the same round. Every traced run's own report is checked: a mode
that traced less than the loop did fails the benchmark instead of looking cheap.

  overhead.py opencl --program cl_loop --lib-dir DIR --tool bench_tool.so [options]
  overhead.py cuda   --program cuda_loop [options]
  overhead.py sycl   --program sycl_loop.py --venv .venv --lib-dir DIR --tool bench_tool.so [options]
options: --loop launch|copy|latency  --pattern NAME (opencl launch loop; see PATTERNS)  --n ITERATIONS  --warm ITERATIONS  --rounds R  --memory
         --modes a,b,... (the modes to run; default all)  --variant LABEL:VAR=VALUE,... (repeatable)
--variant adds a mode: (d) with those environment variables set (LIB=DIR takes libpti.so.0 from
DIR instead), interleaved with the others, so that libpti's switches (docs/environment.md) and two
builds of libpti are compared in one invocation. A variant that sets CL_LOOP_TIMED=1 is one of the
OpenCL floor (f) instead, without libpti (e.g. CL_LOOP_TIMED=1,CL_LOOP_READ_EVERY=4096). A variant
that sets PRELOAD=FILE preloads that library instead of libpti and the bench tool: another tracer,
which must print the bench tool's BENCH_TOOL line (benches/min_tracer.c, the least a tracer can do:
a reference for libpti's cost; issue 39).
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
# The launch loop's floor: what any per-kernel device timing costs on this runtime, in the same
# pattern (issue 39: each pattern against its own floor).
OPENCL_FLOOR = ("f", "floor", "no libpti; the loop times each command itself (profiling queue, an "
                "event per command, START and END read after each wait, events released)")
# The launch loop's patterns (benches/cl_loop.c's environment): how a program submits and waits.
PATTERNS = {
    "sync1": ({"CL_LOOP_SYNC": "1"}, "a wait after every launch"),
    "sync64": ({"CL_LOOP_SYNC": "64"}, "a wait every 64 launches"),
    "sync1024": ({"CL_LOOP_SYNC": "1024"}, "a wait every 1,024 launches"),
    "stream": ({"CL_LOOP_SYNC": "0"}, "no wait until the end"),
    "threads": ({"CL_LOOP_THREADS": "4"}, "4 threads, a queue each, a wait every 1,024 launches"),
    "ooo": ({"CL_LOOP_OOO": "1"}, "an out-of-order queue, a wait every 1,024 launches"),
    "events": ({"CL_LOOP_EVENTS": "1"}, "the program asks for an event per launch (released "
               "unread after its next wait), a wait every 1,024 launches"),
}
CUDA_MODES = [
    ("a", "none", "no CUPTI"),
    ("c", "callbacks", "CUPTI callbacks, runtime and driver domains, empty callback"),
    ("d", "activity", "CUPTI activity: kernels, runtime calls, memcpy, memset"),
    ("e", "both", "(c) and (d) together"),
]


def variant_env(args, mode, env):
    """The environment of a --variant mode: (d)'s, with its variables."""
    for var, value in args.variants.get(mode, {}).items():
        if var not in ("LIB", "PRELOAD"):
            env[var] = value


def lib_dir(args, mode):
    return args.variants.get(mode, {}).get("LIB", args.lib_dir)


def preload_libpti(env, lib, tool, mode):
    """Sets `env` to run a program with libpti (libpti.so.0 from directory `lib`) and the bench
    tool `tool` preloaded in `mode`, only OpenCL traced (anchor_error.py and attach.py too)."""
    env["LD_PRELOAD"] = f"{os.path.join(os.path.abspath(lib), 'libpti.so.0')}:{os.path.abspath(tool)}"
    env["PTI_BENCH_MODE"] = mode
    # Only OpenCL is measured: the other backends stay out of the program.
    env["PTI_LEVEL_ZERO"] = "0"
    env["PTI_SYCL"] = "0"


def opencl_run(args, mode, loop, n, warm):
    env = dict(os.environ)
    env.pop("OPENCL_LAYERS", None)
    env.pop("LD_PRELOAD", None)
    for var in ("CL_LOOP_TIMED", "CL_LOOP_SYNC", "CL_LOOP_THREADS", "CL_LOOP_OOO", "CL_LOOP_EVENTS"):
        env.pop(var, None)
    if args.pattern:
        env.update(PATTERNS[args.pattern][0])
    if mode == "floor":
        env["CL_LOOP_TIMED"] = "1"
    elif is_floor_variant(mode):
        variant_env(args, mode, env)
    elif is_preload_variant(mode):
        env["LD_PRELOAD"] = os.path.abspath(args.variants[mode]["PRELOAD"])
        variant_env(args, mode, env)
    elif mode != "none":
        preload_libpti(env, lib_dir(args, mode), args.tool, "views" if mode in args.variants else mode)
        variant_env(args, mode, env)
    return run([args.program, loop, str(n), str(warm)], env, mode)


SYCL_MODES = [
    ("a", "none", "no libpti"),
    ("b", "idle", "libpti loaded, nothing enabled (the SYCL runtime's XPTI path is taken)"),
    ("d", "views", "API (OpenCL and SYCL runtime), kernel, copy and fill views"),
    ("e", "both", "every callback and every view: fully traced"),
]
# With --intel-dir and --intel-tool (bench_tool.c built with -DBENCH_INTEL_ABI): one tool binary
# of Intel's PTI 1.x ABI, on Intel's library and on libpti's drop-in for it.
SYCL_INTEL_MODES = [
    ("i", "intel", "Intel PTI's libpti_view.so.1: the same views, a tool of its ABI"),
    ("j", "dropin", "the same tool binary on libpti's libpti_view.so.1"),
]


def sycl_run(args, mode, loop, n, warm):
    venv = os.path.abspath(args.venv)
    env = dict(os.environ)
    env["OCL_ICD_FILENAMES"] = os.path.join(venv, "lib", "libintelocl.so")
    env["LD_LIBRARY_PATH"] = os.path.join(venv, "lib")
    for var in ("OPENCL_LAYERS", "LD_PRELOAD", "XPTI_SUBSCRIBERS", "XPTI_TRACE_ENABLE",
                "XPTI_FRAMEWORK_DISPATCHER", "UR_ENABLE_LAYERS"):
        env.pop(var, None)
    if mode in ("intel", "dropin"):
        view_dir = args.intel_dir if mode == "intel" else lib_dir(args, mode)
        env["LD_LIBRARY_PATH"] = os.path.abspath(view_dir) + ":" + env["LD_LIBRARY_PATH"]
        env["LD_PRELOAD"] = ":".join(os.path.abspath(p) for p in args.intel_tool.split(":"))
        env["PTI_BENCH_MODE"] = "views"
        env["PTI_BENCH_SYCL"] = "1"
        env["PTI_LEVEL_ZERO"] = "0"
        if mode == "intel" and args.intel_ze_driver:
            # Intel's library aborts without a Level Zero driver; the program does not use it.
            env["ZE_ENABLE_ALT_DRIVERS"] = os.path.abspath(args.intel_ze_driver)
            env["ZE_ENABLE_TRACING_LAYER"] = "1"
    elif mode != "none":
        env["LD_PRELOAD"] = f"{os.path.join(lib_dir(args, mode), 'libpti.so.0')}:{os.path.abspath(args.tool)}"
        env["PTI_BENCH_MODE"] = "views" if mode in args.variants else mode
        variant_env(args, mode, env)
        env["PTI_BENCH_SYCL"] = "1"
        env["PTI_LEVEL_ZERO"] = "0"
    workload = "burst" if loop == "burst" else "workload"
    return run([os.path.join(venv, "bin", "python"), args.program, str(n), str(warm), workload], env, mode)


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
    # What the program measured of its own commands (cl_loop latency): "OWN name value ...".
    own = next((l.split() for l in out.stdout.splitlines() if l.startswith("OWN")), [])
    counts["own"] = {own[i]: float(own[i + 1]) for i in range(1, len(own) - 1, 2)}
    return float(result[1]), int(result[3]), counts


VARIANTS = {}


def is_floor_variant(mode):
    """A --variant of the OpenCL floor (it sets CL_LOOP_TIMED=1): no libpti, no tool."""
    return VARIANTS.get(mode, {}).get("CL_LOOP_TIMED") == "1"


def is_preload_variant(mode):
    """A --variant that preloads another tracer (it sets PRELOAD=FILE): no libpti, no bench tool."""
    return "PRELOAD" in VARIANTS.get(mode, {})


def variant_description(label, env):
    """What a --variant mode is, for the table."""
    if is_preload_variant(label):
        return f"no libpti; {os.path.basename(env['PRELOAD'])} preloaded, another tracer"
    return (("(f)" if is_floor_variant(label) else "(d)") + " with "
            + ", ".join(f"{k}={v}" for k, v in env.items()))


def check(mode, counts, n, backend):
    """A traced mode must have seen at least one call or record per iteration, and lost none."""
    if mode in ("none", "idle", "floor", "intel", "dropin") or is_floor_variant(mode):
        return
    if set(counts) <= {"own"}:
        sys.exit(f"{mode}: the tool printed no BENCH_TOOL line")
    if mode in ("callbacks", "both") and counts["calls"] < n:
        sys.exit(f"{mode}: {counts['calls']} callbacks for {n} iterations")
    if (mode in ("views", "activity", "both") or mode in VARIANTS) and counts["records"] < n:
        sys.exit(f"{mode}: {counts['records']} records for {n} iterations")
    if counts.get("dropped", 0):
        sys.exit(f"{mode}: {counts['dropped']} records dropped ({backend})")


def report_own(modes, own):
    """What the program measured of its own commands, per mode: the median over rounds of each
    run's median, and whether it lies within the untraced runs' range (their noise)."""
    base = modes[0][1]
    names = sorted(own[base][0])
    print("\nthe program's own measurements (median per run; median and min-max over the rounds, ns)")
    print("| mode | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    for label, mode, _ in modes:
        cells = []
        for name in names:
            v = [o[name] for o in own[mode] if name in o]
            b = [o[name] for o in own[base] if name in o]
            inside = "" if mode == base else (" (within untraced)" if min(b) <= statistics.median(v) <= max(b)
                                             else " (**outside untraced**)")
            cells.append(f"{statistics.median(v):.0f} ({min(v):.0f}-{max(v):.0f}){inside}")
        print(f"| ({label}) {mode} | " + " | ".join(cells) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("backend", choices=["opencl", "cuda", "sycl"])
    p.add_argument("--venv", default=".venv", help="the Python environment with dpctl (sycl)")
    p.add_argument("--program", required=True)
    p.add_argument("--lib-dir", help="directory of libpti.so.0 (opencl)")
    p.add_argument("--tool", help="bench_tool.so (opencl)")
    p.add_argument("--pattern", choices=sorted(PATTERNS),
                   help="opencl launch loop: how the program submits and waits (cl_loop's environment)")
    p.add_argument("--loop", choices=["launch", "copy", "burst", "latency"], default="launch",
                   help="sycl: burst runs sycl_loop.py's burst loop, anything else its workload")
    p.add_argument("--n", type=int, default=200000)
    p.add_argument("--warm", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--memory", action="store_true")
    p.add_argument("--label", default="")
    p.add_argument("--intel-dir", help="directory of Intel PTI's libpti_view.so.1 (sycl)")
    p.add_argument("--intel-tool", help="bench_tool.c built with -DBENCH_INTEL_ABI, after any other "
                   "libraries to preload, colon-separated (sycl)")
    p.add_argument("--intel-ze-driver", help="a Level Zero driver for Intel's library, which aborts "
                   "without one (the simulated driver; sycl)")
    p.add_argument("--modes", help="comma-separated labels of the modes to run (default: all)")
    p.add_argument("--variant", action="append", default=[], metavar="LABEL:VAR=VALUE,...")
    p.add_argument("--smoke", action="store_true",
                   help="check that every mode runs and records what the loop did; print no times "
                        "(one short round says nothing of the cost)")
    args = p.parse_args()
    args.variants = {}
    for v in args.variant:
        label, _, assignments = v.partition(":")
        args.variants[label] = dict(a.split("=", 1) for a in assignments.split(",") if a)
    VARIANTS.update(args.variants)
    if args.backend != "cuda" and not (args.lib_dir and args.tool):
        p.error(f"{args.backend} needs --lib-dir and --tool")
    modes, runner = {
        "opencl": (OPENCL_MODES, opencl_run),
        "cuda": (CUDA_MODES, cuda_run),
        "sycl": (SYCL_MODES, sycl_run),
    }[args.backend]
    if args.backend == "opencl" and args.loop in ("launch", "copy"):
        modes = modes + [OPENCL_FLOOR]
    if args.backend == "sycl" and args.intel_dir and args.intel_tool:
        modes = modes + SYCL_INTEL_MODES
    if args.modes:
        wanted = args.modes.split(",")
        modes = [m for m in modes if m[0] in wanted or m[0] == modes[0][0]]
    modes = modes + [(label, label, variant_description(label, env))
                     for label, env in args.variants.items()]
    floor = any(m == "floor" for _, m, _ in modes)

    times = {m: [] for _, m, _ in modes}
    ratios = {m: [] for _, m, _ in modes}
    own = {m: [] for _, m, _ in modes}
    for _ in range(args.rounds):
        for _, mode, _ in modes:
            t, _, counts = runner(args, mode, args.loop, args.n, args.warm)
            check(mode, counts, args.n, args.backend)
            times[mode].append(t)
            own[mode].append(counts.get("own", {}))
        base = times[modes[0][1]][-1]
        for _, mode, _ in modes:
            ratios[mode].append(times[mode][-1] / base)

    loop = ("burst" if args.loop == "burst" else "workload") if args.backend == "sycl" else args.loop
    if args.smoke:
        # Times of one short round mean nothing (a debug build, a few iterations, a noisy host):
        # say what was checked instead.
        print(f"\n{args.label or args.backend}, {loop} loop, smoke run: {len(modes)} modes ran "
              f"{args.n} iterations each; every traced mode recorded at least one call or record "
              f"per iteration and lost none ({', '.join(m for _, m, _ in modes)}). No times: "
              f"`cargo xtask bench` measures them.")
        return
    pattern = f", pattern {args.pattern} ({PATTERNS[args.pattern][1]})" if args.pattern else ""
    print(f"\n{args.label or args.backend}, {loop} loop{pattern}: {args.n} iterations after {args.warm} of "
          f"warm-up, {args.rounds} rounds, modes interleaved")
    # Against the floor, per round too: (mode / untraced) / (floor / untraced) of the same round.
    to_floor = {m: [t / f for t, f in zip(times[m], times["floor"])] for m in times} if floor else {}
    extra = " median ratio to (f) | min-max to (f) |" if floor else ""
    print(f"| mode | | median ns per iteration | median ratio to (a) | min-max ratio |{extra}")
    print("| --- | --- | --- | --- | --- |" + (" --- | --- |" if floor else ""))
    for label, mode, what in modes:
        r = ratios[mode]
        cells = ""
        if floor:
            f = to_floor[mode]
            cells = f" {statistics.median(f):.3f} | {min(f):.3f}-{max(f):.3f} |"
        print(f"| ({label}) {mode} | {what} | {statistics.median(times[mode]):.1f} | "
              f"{statistics.median(r):.3f} | {min(r):.3f}-{max(r):.3f} |{cells}")

    if any(own[modes[0][1]]):
        report_own(modes, own)

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
