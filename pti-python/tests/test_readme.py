"""The README's Python quick start, as written: its program, run by the fresh environment's
Python (the wheel and PyOpenCL installed) from a directory outside the checkout."""
from __future__ import annotations

import pathlib
import re

from conftest import ROOT


def quick_start_program() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Python quick start\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"one Python block in the quick start, found {len(blocks)}"
    return blocks[0]


def test_the_readme_python_quick_start_runs_as_written(venv, tmp_path: pathlib.Path) -> None:
    program = tmp_path / "my_program.py"
    program.write_text(quick_start_program())
    done = venv.run([str(venv.python.name), str(program)], timeout=300)
    out = done.stdout
    # The kernel's record, under the external correlation pushed around it, and the calls.
    assert re.search(r"^DEVICE_CPU_KERNEL \[\d+\] \[\d+\]$", out, flags=re.M), out
    assert re.search(r"^clEnqueueNDRangeKernel \d+$", out, flags=re.M), out
    assert "clGetPlatformIDs" in out, out
