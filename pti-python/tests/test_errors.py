"""What goes wrong is said: an exception in a callback is a critical event (a warning), a
critical event of libpti is a warning, importing libpti after a runtime is an ImportError
naming it, and bad arguments are Python exceptions."""
from conftest import result


def test_a_raising_callback_becomes_a_critical_event(venv):
    done = venv.run(["callback_raises.py"])
    r = result(done)
    r["stderr tracebacks"] = done.stderr.count("ValueError: the tool's bug")
    assert r["sum"] == 16.0
    raised = [w for w in r["warnings"] if "PTI_ERROR_CALLBACK_PANICKED" in w]
    assert raised and all("ValueError" in w and "clGetPlatformIDs" in w for w in raised), r
    delivered, errors, skipped = r["counts"]
    assert errors == len(raised) and delivered > errors and skipped == 0
    assert [e[:2] for e in r["events"]] == [[301, "PTI_ERROR_CALLBACK_PANICKED"]] * errors
    # The traceback went to sys.unraisablehook (stderr by default).
    assert r["stderr tracebacks"] == errors


def test_critical_events_are_python_warnings(venv):
    # Another XPTI subscriber configured: libpti cannot trace SYCL and says so when asked to.
    script = (
        "import json, warnings, libpti\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    libpti.Views('RUNTIME_API').start().stop()\n"
        "print('RESULT', json.dumps([[x.category.__name__, str(x.message)] for x in w]))\n"
    )
    done = venv.run(["python", "-c", script], {"XPTI_SUBSCRIBERS": "/elsewhere/libother.so"})
    warned = result(done)
    assert warned and warned[0][0] == "CriticalEventWarning"
    assert "PTI_ERROR_TRACING_NOT_INITIALIZED" in warned[0][1] and "/elsewhere/libother.so" in warned[0][1]


def test_importing_libpti_after_a_runtime_is_an_error_naming_it(venv):
    r = result(venv.run(["late_import.py"]))
    assert r["imported"] is False
    assert "OpenCL loader" in r["error"] and "libOpenCL" in r["error"] and "import libpti first" in r["error"].lower()
    allowed = result(venv.run(["late_import.py"], {"LIBPTI_ALLOW_LATE_IMPORT": "1"}))
    assert allowed["imported"] is True and any("libOpenCL" in w for w in allowed["warnings"])


def test_bad_arguments_are_python_exceptions(venv):
    r = result(venv.run(["api_errors.py"]))
    assert r["unknown kind name"][0] == "ValueError" and "NO_SUCH_VIEW" in r["unknown kind name"][2]
    assert r["unknown kind value"][0] == "ValueError"
    assert r["no kind"][0] == "ValueError"
    assert r["pop with nothing pushed"][:2] == ["PtiError", "PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY"]
    assert r["push kind 0"][0] == "ValueError"
    assert r["bad domain"][0] == "ValueError"
    assert r["bad api id"][:2] == ["PtiError", "PTI_ERROR_BAD_API_ID"]
    assert r["record-less kind"][0] == "ValueError"
    assert r["second views"][0] == "RuntimeError" and "already started" in r["second views"][2]
    assert r["closed subscriber"][0] == "RuntimeError" and "closed" in r["closed subscriber"][2]
    assert r["views again after stop"] == "no error"
