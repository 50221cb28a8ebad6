"""A program that exits while a native runtime thread still calls back into Python: callbacks
stop at the interpreter's exit (never delivered during or after finalisation), and the process
ends cleanly, every time. Without libpti's exit handler, the same program aborted ("Fatal Python
error") in 4 of 9 runs."""
import json
import subprocess

import pytest

from conftest import PROGRAMS, result


@pytest.fixture(scope="module")
def caller(tmp_path_factory):
    out = tmp_path_factory.mktemp("caller") / "libcaller_thread.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O1", "-o", str(out), str(PROGRAMS / "caller_thread.c"), "-lOpenCL", "-lpthread"],
        check=True,
    )
    return out


@pytest.mark.parametrize("pause", ["0", "0.001", "0.02"])
def test_exit_while_a_runtime_thread_calls_back(venv, caller, pause):
    for _ in range(3):
        done = venv.run(["exit_while_calling.py", str(caller), pause], timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert "Fatal Python error" not in done.stderr, done.stderr
        r = result(done)
        assert r["seen"] >= 200 and r["native_calls"] > 0
        # An exit handler that runs after libpti's: no callback ran since, and the thread's
        # calls went on, their callbacks skipped.
        late = json.loads(next(l for l in done.stdout.splitlines() if l.startswith("LATE "))[5:])
        assert late["seen_after"] == late["seen"] and late["skipped"] > 0, late
