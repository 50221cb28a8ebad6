#!/usr/bin/env python3
"""Runs benches/ze_overhead (compiled) in its six modes, interleaved, several rounds, over the
simulated Level Zero driver through the real loader, and prints each mode's median cost per call
and its ratio to `off` (no tracing layer) from the same invocation.

usage: level_zero_overhead.py <ze_overhead executable> <libze_sim.so> [rounds] [setarg calls] [launches]"""
import os
import statistics
import subprocess
import sys

MODES = ["off", "layer", "tracer", "attached", "callbacks", "views"]
exe, sim = sys.argv[1], os.path.abspath(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
extra = sys.argv[4:6]
results = {m: {"setarg": [], "launch": []} for m in MODES}
for r in range(rounds):
    for mode in MODES:
        env = dict(os.environ, ZE_ENABLE_ALT_DRIVERS=sim)
        env.pop("ZE_ENABLE_TRACING_LAYER", None)
        if mode == "off":
            env["PTI_LEVEL_ZERO"] = "0"
        else:
            env.pop("PTI_LEVEL_ZERO", None)
        out = subprocess.run([exe, mode, *extra], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{mode}: exit {out.returncode}\n{out.stdout}\n{out.stderr}")
        line = next(l for l in out.stdout.splitlines() if l.startswith("RESULT"))
        parts = line.split()
        for key in ("setarg", "launch"):
            results[mode][key].append(float(parts[parts.index(key) + 1]))
print(f"{rounds} rounds, modes interleaved; median ns per call (ratio to off)")
print(f"{'mode':10} {'zeKernelSetArgumentValue':>26} {'kernel launch':>22}")
base = {k: statistics.median(v) for k, v in results["off"].items()}
for mode in MODES:
    cells = []
    for key in ("setarg", "launch"):
        m = statistics.median(results[mode][key])
        cells.append(f"{m:10.1f} ({m / base[key]:5.2f}x)")
    print(f"{mode:10} {cells[0]:>26} {cells[1]:>22}")
