#!/usr/bin/env python3
"""What attaching libpti costs a process at start-up and exit (issue 39), as whole-process wall
times, the modes interleaved: a program that does nothing (/bin/true: loading libpti, its
constructor, the tool's set-up, the flush at exit) and benches/cl_loop with one launch (the same,
plus libpti's OpenCL layer taking its place in the loader and the first call's device probe).

  attach.py --program cl_loop --tool bench_tool.so --lib-dir DIR [--rounds R]

Prints per program and mode the median wall time in ms over the rounds, its min-max, and the
median per-round difference from the untraced run. The OpenCL platform is chosen by the
environment ($PTI_TEST_PLATFORM, $OCL_ICD_VENDORS), as for overhead.py."""
import argparse
import os
import statistics
import subprocess
import sys
import time

from overhead import preload_libpti

MODES = [("none", "no libpti"), ("idle", "libpti loaded, nothing enabled"),
         ("views", "libpti with bench_tool.so: API, kernel, copy and fill views")]


def run(cmd, mode, args):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if mode != "none":
        preload_libpti(env, args.lib_dir, args.tool, mode)
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1e3
    if out.returncode != 0:
        sys.exit(f"{mode}: {' '.join(cmd)} exited with {out.returncode}\n{out.stdout}\n{out.stderr}")
    return elapsed


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--program", required=True)
    p.add_argument("--tool", required=True)
    p.add_argument("--lib-dir", required=True)
    p.add_argument("--rounds", type=int, default=21)
    args = p.parse_args()
    programs = [("/bin/true", ["/bin/true"]), ("cl_loop, one launch", [args.program, "launch", "1", "0"])]
    times = {(name, m): [] for name, _ in programs for m, _ in MODES}
    for _ in range(args.rounds):
        for name, cmd in programs:
            for mode, _ in MODES:
                times[(name, mode)].append(run(cmd, mode, args))
    print(f"attaching libpti: whole-process wall time, {args.rounds} rounds, modes interleaved (ms)")
    print("| program | mode | median | min-max | added to none (median of rounds) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, _ in programs:
        base = times[(name, "none")]
        for mode, what in MODES:
            t = times[(name, mode)]
            added = "" if mode == "none" else f"{statistics.median(a - b for a, b in zip(t, base)):+.2f}"
            print(f"| {name} | {mode} ({what}) | {statistics.median(t):.2f} | {min(t):.2f}-{max(t):.2f} | {added} |")


if __name__ == "__main__":
    main()
