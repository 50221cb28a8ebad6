#!/usr/bin/env python3
"""How far libpti's conversion of device timestamps lies from the truth (issue 39), on an OpenCL
device without a timer read beside the host clock (PoCL's, NVIDIA's), for several anchor
intervals and builds, run interleaved.

  anchor_error.py --program cl_loop --tool bench_tool.so --lib-dir DIR [--n N] [--sync S]
                  [--rounds R] [--variant LABEL:VAR=VALUE,...]...

Each run is `cl_loop anchor N` (launches with the program's own events, each enqueue call
bracketed by two reads of CLOCK_MONOTONIC_RAW, libpti's host clock) under libpti with the kernel
view, and writes two files: the program's brackets and device times, and libpti's kernel records.
The ground truth is the program's: a command was queued inside its call, so the device clock's
offset lies in [enter - QUEUED, exit - QUEUED] for every command; the tightest such interval over
each 50 ms window (its width is the truth's own uncertainty) gives the offset there. A record's
error is its start minus the program's START plus that offset: negative where libpti puts the
command early. A variant without LIB= uses --lib-dir; LIB=DIR takes libpti.so.0 from DIR (another
build), and its other variables are set for libpti (PTI_CLOCK_ANCHOR_NS=0: every command an
anchor, as before issue 39)."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from overhead import preload_libpti

WINDOW_NS = 50_000_000  # --window-ms


def run(args, variant, env_vars, tmp, round_):
    lib = env_vars.get("LIB", args.lib_dir)
    truth = os.path.join(tmp, f"{variant}.{round_}.truth")
    records = os.path.join(tmp, f"{variant}.{round_}.records")
    env = dict(os.environ)
    env.update({k: v for k, v in env_vars.items() if k != "LIB"})
    preload_libpti(env, lib, args.tool, "views")
    env.update({"PTI_BENCH_VIEWS": "kernel", "PTI_BENCH_DUMP": records, "CL_LOOP_DUMP": truth,
                "CL_LOOP_SYNC": str(args.sync)})
    out = subprocess.run([args.program, "anchor", str(args.n)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{variant}: cl_loop exited with {out.returncode}\n{out.stdout}\n{out.stderr}")
    cmds = [tuple(map(int, l.split())) for l in open(truth)]
    # In launch order: by start (one in-order queue).
    recs = sorted((tuple(map(int, l.split())) for l in open(records)), key=lambda r: r[1])
    if len(recs) != len(cmds):
        sys.exit(f"{variant}: {len(recs)} kernel records for {len(cmds)} launches")
    return cmds, recs


def errors(cmds, recs):
    """Each record's start error against the truth, and the truth's uncertainty (half-widths)."""
    windows = {}
    for enter, exit_, q, _, _ in cmds:
        w = windows.setdefault(enter // WINDOW_NS, [-2**63, 2**63])
        w[0] = max(w[0], enter - q)
        w[1] = min(w[1], exit_ - q)
    errs, widths, outside = [], [], []
    for (enter, _, _, s, _), (_, start, _) in zip(cmds, recs):
        lo, hi = windows[enter // WINDOW_NS]
        if lo > hi:
            sys.exit(f"the device clock drifted within {WINDOW_NS} ns: no single offset fits ({lo} > {hi})")
        truth = (lo + hi) / 2
        errs.append(start - (s + truth))
        widths.append((hi - lo) / 2)
        # How far the record lies outside what the truth allows (0: inside).
        outside.append(max(s + lo - start, start - (s + hi), 0))
    return errs, widths, outside


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--program", required=True)
    p.add_argument("--tool", required=True)
    p.add_argument("--lib-dir", required=True)
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--sync", type=int, default=1024, help="a clFinish every this many launches (0: at the end)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--variant", action="append", default=[], metavar="LABEL:VAR=VALUE,...")
    p.add_argument("--window-ms", type=float, default=50,
                   help="the span over which the device clock's offset is taken as constant (drift)")
    p.add_argument("--keep", help="a directory (new) to keep every run's two files in")
    args = p.parse_args()
    global WINDOW_NS
    WINDOW_NS = int(args.window_ms * 1e6)
    variants = {"default": {}}
    for v in args.variant:
        label, _, assignments = v.partition(":")
        variants[label] = dict(a.split("=", 1) for a in assignments.split(",") if a)
    results = {v: ([], [], [], []) for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for v, env_vars in variants.items():
                cmds, recs = run(args, v, env_vars, tmp, r)
                errs, widths, outside = errors(cmds, recs)
                results[v][0].extend(errs)
                results[v][1].extend(widths)
                results[v][2].append(statistics.median(cmds[i][1] - cmds[i][0] for i in range(len(cmds))))
                results[v][3].extend(outside)
        if args.keep:
            shutil.copytree(tmp, args.keep)
    print(f"conversion error of kernel start times, {args.n} launches per run, a clFinish every "
          f"{args.sync or args.n}, {args.rounds} rounds interleaved, the offset taken as constant over "
          f"{WINDOW_NS / 1e6:g} ms (ns; negative: early)")
    print("| variant | median error | p1 | p99 | largest \\|error\\| | truth ± (median) | enqueue call (median) "
          "| outside the truth | largest outside, after each run's first 64 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for v, (errs, widths, calls, outside) in results.items():
        per_run = args.n
        late = [o for i, o in enumerate(outside) if i % per_run >= 64]
        share = sum(1 for o in outside if o > 0) / len(outside) * 100
        errs.sort()
        pct = lambda q: errs[min(len(errs) - 1, int(q * len(errs)))]
        label = v + (" (" + ", ".join(f"{k}={x}" for k, x in variants[v].items()) + ")" if variants[v] else "")
        print(f"| {label} | {statistics.median(errs):.0f} | {pct(0.01):.0f} | {pct(0.99):.0f} | "
              f"{max(abs(errs[0]), abs(errs[-1])):.0f} | {statistics.median(widths):.0f} | "
              f"{statistics.median(calls):.0f} | {share:.2f}% | {max(late, default=0):.0f} |")


if __name__ == "__main__":
    main()
