"""A PyOpenCL program on PoCL traces itself through the wheel's libpti: callbacks and records
agree on correlation IDs, kernel and copy records name the calls that submitted them, external
IDs mark the launches, nothing is lost, and the program's output is unchanged."""
from collections import Counter

from conftest import output, result


def test_a_pyopencl_program_traces_itself_on_pocl(venv):
    plain = venv.run(["pyopencl_program.py"])
    traced = venv.run(["pyopencl_program.py"], {"LIBPTI_TEST_TRACE": "1"})
    assert output(plain) and output(traced) == output(plain)
    r = result(traced)

    # Every call has an ENTER and an EXIT with one correlation ID.
    sites = Counter((site, name, corr) for site, name, corr in r["calls"])
    calls = {corr: name for _, name, corr in r["calls"]}
    assert len(calls) > 10
    for (site, name, corr), n in sites.items():
        assert n == 1 and sites[("EXIT" if site == "ENTER" else "ENTER", name, corr)] == 1

    # Each API record is one of those calls, named as the callbacks named it.
    apis = {corr: name for corr, name in r["apis"]}
    assert len(apis) == len(r["apis"]) > 10
    for corr, name in apis.items():
        assert calls.get(corr) == name, (corr, name)

    # Three launches of "twice", each from a clEnqueueNDRangeKernel with its external ID.
    assert [name for _, name in r["kernels"]] == ["twice"] * 3
    launches = [corr for corr, _ in r["kernels"]]
    assert all(apis[c] == "clEnqueueNDRangeKernel" for c in launches)
    assert sorted(r["kernel_array_ids"]) == sorted(launches)
    assert r["kernel_array_durations_ok"]
    externals = dict((corr, ext) for corr, ext in r["externals"])
    assert [externals[c] for c in launches] == [100, 101, 102]

    # The read-back is a copy record of a clEnqueueReadBuffer.
    assert any(apis.get(corr) == "clEnqueueReadBuffer" for corr, _ in r["copies"]), r["copies"]

    assert r["dropped"] == 0 and r["pending"] == 0 and r["criticals"] == []
    # libpti's count at emission: every record emitted was delivered or dropped.
    for kind, (emitted, delivered, dropped) in r["accounting"].items():
        assert emitted == delivered + dropped, (kind, emitted, delivered, dropped)
    assert r["accounting"]["DRIVER_API"][0] == len(r["apis"])
    delivered, raised, skipped = r["callback_counts"]
    assert delivered == len(r["calls"]) and raised == 0 and skipped == 0
