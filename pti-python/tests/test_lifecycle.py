"""Views and subscribers over a program's life: flush while running, Views in turn, a callback
closing its own subscriber, fork, critical events delivered without a stop, late imports of
dpctl, Views under pti-trace."""
from conftest import PROGRAMS, result


def test_views_and_subscribers_over_a_programs_life(venv):
    r = result(venv.run(["lifecycle.py"]))
    # The untimed kernel is said at the next bytecode, not only at stop.
    assert len(r["warned before stop"]) == 1 and "without profiling" in r["warned before stop"][0]
    assert r["untimed kernels"] == 0
    assert r["kernels after flush"] == 1
    assert r["first: api records"] > 0 and r["first unchanged"]
    assert r["first stop left second running"]
    assert r["second's records"] > 0 and r["shared records"] == 0
    assert r["callbacks of the closed subscriber"] == 1
    assert r["child exit status"] == 0 and r["parent records after fork"] > 0


def test_importing_libpti_after_dpctl_is_an_error_naming_sycl(venv):
    env = {"OCL_ICD_FILENAMES": str(venv.lib / "libintelocl.so"), "LD_LIBRARY_PATH": str(venv.lib)}
    r = result(venv.run(["late_dpctl.py"], env))
    assert r["imported"] is False and "SYCL runtime" in r["error"] and "libsycl.so" in r["error"]


def test_views_under_pti_trace_fail_clearly(venv):
    done = venv.run(["pti-trace", "-s", "--", str(venv.python), str(PROGRAMS / "views_under_pti_trace.py")])
    r = result(done)
    assert r["started"] is False and "pti-trace's collector" in r["error"]
