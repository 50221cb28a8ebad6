"""libpti as the ITT collector of an unmodified PyPI ``ittapi`` (``INTEL_LIBITTNOTIFY64`` naming the
wheel's libpti.so.0): the program's tasks, overlapped task, event, marker and frame come back as
EXT_ANNOTATION records, nested as they ran, without the task made while paused; oneCCL's names in
its domain come back as COMMUNICATION records with the sizes given as metadata; and pti-trace
from the wheel shows them on the timeline and in its summary."""
import json
import shutil

from conftest import PROGRAMS, result


def libpti_so(venv):
    found = list(venv.path.glob("lib/python*/site-packages/libpti/libpti.so.0"))
    assert len(found) == 1, found
    return str(found[0])


TASK, OVERLAPPED, MARKER, FRAME, EVENT = 1, 2, 3, 4, 5


def test_ittapi_annotations_and_oneccl_names_become_records(venv):
    done = venv.run(["itt_annotated.py", "views"], extra={"INTEL_LIBITTNOTIFY64": libpti_so(venv)})
    got = result(done)
    assert got["dropped"] == 0, got
    assert got["paused_seen"] is True and got["paused_after"] is False, got
    mine = [(a["type"], a["name"], a["depth"]) for a in got["annotations"] if a["domain"] == "app"]
    # Ended innermost first; the task made while paused is not there.
    assert sorted(mine) == sorted([(TASK, "inner", 1), (TASK, "inner", 1), (TASK, "outer", 0),
                                   (OVERLAPPED, "async", 0), (OVERLAPPED, "first", 0),
                                   (OVERLAPPED, "second", 0), (MARKER, "tick", 0)]), got["annotations"]
    # Matched on the whole ID: the first ends first, though both IDs start with 7.
    first, second = (next(a for a in got["annotations"] if a["name"] == n) for n in ("first", "second"))
    assert first["start"] < second["start"] and first["end"] < second["end"], (first, second)
    tick = next(a for a in got["annotations"] if a["name"] == "tick")
    assert tick["start"] == tick["end"], tick
    frames = [(a["type"], a["name"]) for a in got["annotations"] if a["domain"] == "frames"]
    assert frames == [(FRAME, "frames")], got["annotations"]
    outer = next(a for a in got["annotations"] if a["name"] == "outer")
    for inner in (a for a in got["annotations"] if a["name"] == "inner"):
        assert outer["start"] <= inner["start"] <= inner["end"] <= outer["end"], (outer, inner)
    events = [(a["domain"], a["name"]) for a in got["annotations"] if a["type"] == EVENT]
    assert events == [("ITT event", "mark")], got["annotations"]
    ccl = [(a["name"], a["type"]) for a in got["annotations"] if a["domain"] == "oneCCL::API"]
    assert ccl == [("allreduce", TASK), ("allreduce", TASK), ("allgatherv", TASK), ("bcast", TASK)], ccl
    comms = [(c["name"], c["send"]) for c in got["communication"]]
    assert comms == [("allreduce", 0), ("allreduce", 1 << 20), ("allgatherv", 4096), ("bcast", 64)], comms
    assert all(c["start"] <= c["end"] for c in got["communication"])


def test_a_second_copy_of_libpti_named_as_collector_hands_the_annotations_to_the_first(venv, tmp_path):
    """INTEL_LIBITTNOTIFY64 names another file than the libpti the program loaded (as when
    LD_LIBRARY_PATH finds another build first): ITT loads that second copy, which lets the first
    fill ITT's table, so the annotations still reach the views."""
    copy = tmp_path / "libpti.so.0"
    shutil.copy(libpti_so(venv), copy)
    got = result(venv.run(["itt_annotated.py", "views"], extra={"INTEL_LIBITTNOTIFY64": str(copy)}))
    names = sorted(a["name"] for a in got["annotations"] if a["domain"] == "app")
    assert names == ["async", "first", "inner", "inner", "outer", "second", "tick"], got["annotations"]
    assert [c["send"] for c in got["communication"]] == [0, 1 << 20, 4096, 64], got["communication"]


def test_without_the_collector_variable_ittapi_runs_and_nothing_is_recorded(venv):
    got = result(venv.run(["itt_annotated.py", "views"]))
    assert got["annotations"] == [] and got["communication"] == [], got


def test_pti_trace_shows_the_annotations_as_tracks_and_in_its_summary(venv, tmp_path):
    timeline = tmp_path / "trace.%p.json"
    done = venv.run(["pti-trace", "-o", str(timeline), "--", str(venv.python),
                     str(PROGRAMS / "itt_annotated.py"), "pyopencl"])
    assert "OUTPUT done" in done.stdout, done.stderr
    summary = done.stderr
    assert "Annotations (ITT tasks, frames, events)" in summary, summary
    rows = {" ".join(line.split()[:-6]): int(line.split()[-6]) for line in summary.splitlines()
            if line.startswith("  app: ")}
    assert rows == {"app: outer": 1, "app: inner": 2, "app: async": 1, "app: first": 1, "app: second": 1}, summary
    assert "ITT markers: 1 app: tick" in summary, summary
    assert "  allreduce: 2 operations, 1048576 bytes sent, 0 bytes received" in summary, summary
    files = list(tmp_path.glob("trace.*.json"))
    assert len(files) == 1, summary
    events = json.loads(files[0].read_text())["traceEvents"]
    annotations = [e for e in events if e.get("cat") == "annotation"]
    outer = next(e for e in annotations if e["name"] == "app: outer")
    kernel_calls = [e for e in events if e.get("name") == "clEnqueueNDRangeKernel"]
    assert len(kernel_calls) == 1, summary
    call = kernel_calls[0]
    # The call sits inside the annotation in time; the annotation is on its thread's track of
    # its domain.
    assert outer["ts"] <= call["ts"] and call["ts"] + call["dur"] <= outer["ts"] + outer["dur"], (call, outer)
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert names[outer["tid"]] == f"ITT app (thread {call['tid']})", names
    sent = sorted(e["name"] for e in events if e.get("cat") == "communication")
    assert sent == ["allgatherv (4096 B sent, 0 B received)", "allreduce (0 B sent, 0 B received)",
                    "allreduce (1048576 B sent, 0 B received)", "bcast (64 B sent, 0 B received)"], sent
