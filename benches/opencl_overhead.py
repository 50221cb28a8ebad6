#!/usr/bin/env python3
"""Runs benches/cl_overhead (compiled) in its four modes, interleaved, several rounds, and prints
each mode's median cost per call and its ratio to `off` (libpti loaded, layer not active) from
the same invocation.

usage: opencl_overhead.py <cl_overhead executable> [rounds] [getinfo calls] [launches]
The OpenCL runtime is chosen by the environment (PTI_TEST_PLATFORM, OCL_ICD_VENDORS, ...)."""
import os
import statistics
import subprocess
import sys

MODES = ["off", "layer", "callbacks", "views"]
exe = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
extra = sys.argv[3:5]
results = {m: {"getinfo": [], "launch": [], "write": []} for m in MODES}
for r in range(rounds):
    for mode in MODES:
        env = dict(os.environ)
        env.pop("OPENCL_LAYERS", None)
        if mode == "off":
            env["PTI_OPENCL_LAYER"] = "0"
        out = subprocess.run([exe, mode, *extra], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{mode}: exit {out.returncode}\n{out.stdout}\n{out.stderr}")
        line = next(l for l in out.stdout.splitlines() if l.startswith("RESULT"))
        parts = line.split()
        for key in ("getinfo", "launch", "write"):
            results[mode][key].append(float(parts[parts.index(key) + 1]))
print(f"{rounds} rounds, modes interleaved; median ns per call (ratio to off)")
print(f"{'mode':10} {'clGetPlatformInfo':>24} {'clEnqueueNDRangeKernel':>26} {'blocking 64 B write':>24}")
base = {k: statistics.median(v) for k, v in results["off"].items()}
for mode in MODES:
    cells = []
    for key in ("getinfo", "launch", "write"):
        m = statistics.median(results[mode][key])
        cells.append(f"{m:10.1f} ({m / base[key]:5.2f}x)")
    print(f"{mode:10} {cells[0]:>24} {cells[1]:>26} {cells[2]:>24}")
