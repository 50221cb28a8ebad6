"""pti-trace from the wheel (its console script) profiles a Python program: the summary names the
program's kernel, and the timeline is trace-event JSON holding it."""
import json

from conftest import PROGRAMS, output


def test_pti_trace_from_the_wheel_traces_a_python_program(venv, tmp_path):
    timeline = tmp_path / "trace.%p.json"
    plain = venv.run(["pyopencl_program.py"])
    done = venv.run(["pti-trace", "-o", str(timeline), "--", str(venv.python), str(PROGRAMS / "pyopencl_program.py")])
    assert output(done) == output(plain)
    summary = done.stderr
    assert "records dropped: 0" in summary, summary
    assert any(line.split()[:2] == ["twice", "3"] for line in summary.splitlines()), summary
    files = list(tmp_path.glob("trace.*.json"))
    assert len(files) == 1, done.stderr
    events = json.loads(files[0].read_text())["traceEvents"]
    # Each kernel is drawn on its queue's track and its submitting thread's device track.
    kernels = [e for e in events if e.get("name") == "twice" and e.get("ph") == "X"]
    assert len({e["args"]["correlation_id"] for e in kernels}) == 3 and len(kernels) == 6
    assert sum(1 for e in events if e.get("name") == "clEnqueueNDRangeKernel") >= 3
