"""pti-trace from the wheel (its console script) profiles Python programs: the summary names the
program's kernel, a JSON timeline holds it; a Perfetto trace exported to SQLite places a queue
that ran only markers on its device."""
import json
import sqlite3

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


def test_a_marker_only_queue_of_pyopencl_sits_on_its_device(venv, tmp_path):
    """The default Perfetto trace, exported to SQLite by the wheel's pti-trace: the queue that ran
    only markers and a barrier is on the device of the queue that copied."""
    done = venv.run(["pti-trace", "-o", str(tmp_path / "trace.%p.pftrace"), "--", str(venv.python),
                     str(PROGRAMS / "pyopencl_markers.py")])
    assert "OUTPUT done" in done.stdout, done.stderr
    traces = [str(p) for p in tmp_path.glob("trace.*.pftrace")]
    assert len(traces) == 1, done.stderr
    database = tmp_path / "run.db"
    venv.run(["pti-trace", "export", "--sqlite", str(database), *traces])
    rows = sqlite3.connect(database).execute(
        "SELECT kind, device, queue FROM device_op ORDER BY start_ns").fetchall()
    places = {kind: {(device, queue) for k, device, queue in rows if k == kind}
              for kind in ("memcpy", "marker", "barrier")}
    assert [len(p) for p in places.values()] == [1, 1, 1], rows
    (copy_device, copy_queue), = places["memcpy"]
    (marker_device, marker_queue), = places["marker"]
    assert places["barrier"] == places["marker"], rows
    assert copy_device == marker_device and copy_device.startswith("device 0"), rows
    assert copy_queue != marker_queue, rows
