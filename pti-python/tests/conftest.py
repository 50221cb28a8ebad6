"""Fixtures of the Python package's tests: a fresh virtual environment with libpti's wheel
(``LIBPTI_WHEEL``, built by ``cargo xtask test`` or ``cargo xtask wheel``) and the programs the
tests trace (PyOpenCL, dpctl and Intel's CPU OpenCL runtime, from the wheels ``cargo xtask setup``
downloads into ``.cache/python-wheels``), and a way to run those programs.

Each test runs a program in its own process with that environment's Python: tracing happens
inside the program (it imports libpti), and a crash or hang cannot take pytest with it.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Dict, List, Optional

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"
PACKAGES = ["pyopencl==2026.1.4", "dpctl==0.22.1", "intel-opencl-rt==2026.2.0", "ittapi==1.2.2"]

# Set-up a test's environment must not inherit: each program starts clean.
_CLEARED = (
    "LD_PRELOAD",
    "OPENCL_LAYERS",
    "OCL_ICD_FILENAMES",
    "XPTI_SUBSCRIBERS",
    "XPTI_TRACE_ENABLE",
    "XPTI_FRAMEWORK_DISPATCHER",
    "UR_ENABLE_LAYERS",
    "ZE_ENABLE_TRACING_LAYER",
    "PTI_SYCL",
    "PTI_OPENCL_LAYER",
    "PTI_LEVEL_ZERO",
    "LIBPTI_ALLOW_LATE_IMPORT",
    "ONEAPI_DEVICE_SELECTOR",
    "INTEL_LIBITTNOTIFY64",
    # It would come before the wheel's RUNPATH: the programs use the wheel's libpti.
    "LD_LIBRARY_PATH",
)


class Venv:
    """The fresh environment: its directory and Python."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        self.python = path / "bin" / "python"
        self.lib = path / "lib"

    def env(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
        env.update(extra or {})
        return env

    def run(
        self,
        args: List[str],
        extra: Optional[Dict[str, str]] = None,
        timeout: float = 120,
        check: bool = True,
    ) -> subprocess.CompletedProcess:
        """Runs ``args`` (a program of tests/programs and its arguments, or a command of the
        venv's bin/) and returns what it printed; fails the test if it fails (with ``check``)."""
        first = args[0]
        if first.endswith(".py"):
            argv = [str(self.python), str(PROGRAMS / first), *args[1:]]
        else:
            argv = [str(self.path / "bin" / first), *args[1:]]
        try:
            done = subprocess.run(
                argv, env=self.env(extra), capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"{argv} still ran after {timeout} s (hung)\n--- stdout\n{e.stdout}\n--- stderr\n{e.stderr}")
        if check and done.returncode != 0:
            pytest.fail(
                f"{argv} failed ({done.returncode})\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
            )
        return done


def result(done: subprocess.CompletedProcess) -> dict:
    """The ``RESULT {json}`` line a program printed."""
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    pytest.fail(f"no RESULT line\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")


def output(done: subprocess.CompletedProcess) -> List[str]:
    """The program's own output (its ``OUTPUT`` lines), which tracing must not change."""
    return [l for l in done.stdout.splitlines() if l.startswith("OUTPUT ")]


@pytest.fixture(scope="session")
def venv() -> Venv:
    wheel = os.environ.get("LIBPTI_WHEEL")
    if not wheel or not pathlib.Path(wheel).is_file():
        pytest.fail(
            "LIBPTI_WHEEL names no wheel: run these tests through `cargo xtask test`, or build "
            "one with `cargo xtask wheel` and set LIBPTI_WHEEL to it"
        )
    cache = pathlib.Path(os.environ.get("LIBPTI_WHEEL_CACHE", ROOT / ".cache/python-wheels"))
    if not cache.is_dir():
        pytest.fail(f"{cache} is missing: `cargo xtask setup` downloads the tests' packages there")
    where = ROOT / "target" / "python-tests" / "venv"
    shutil.rmtree(where, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "--no-index", "--find-links", str(cache), wheel, *PACKAGES],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.fail(f"pip install into the fresh venv failed\n{done.stdout}\n{done.stderr}")
    return Venv(where)
