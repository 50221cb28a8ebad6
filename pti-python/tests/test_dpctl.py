"""A dpctl (SYCL) program on Intel's CPU OpenCL runtime traces itself: libpti, imported first,
is the SYCL runtime's XPTI subscriber and its OpenCL layer, so its views hold the runtime's calls,
the OpenCL calls under them and the kernel and copy they submitted, correlated."""
from conftest import output, result


def dpctl_env(venv):
    return {
        "OCL_ICD_FILENAMES": str(venv.lib / "libintelocl.so"),
        "LD_LIBRARY_PATH": str(venv.lib),
        "ONEAPI_DEVICE_SELECTOR": "opencl:cpu",
    }


def test_a_dpctl_program_traces_itself(venv):
    plain = venv.run(["dpctl_program.py"], dpctl_env(venv))
    traced = venv.run(["dpctl_program.py"], {**dpctl_env(venv), "LIBPTI_TEST_TRACE": "1"})
    assert output(plain) and output(traced) == output(plain)
    r = result(traced)

    runtime = {corr: name for corr, name in r["runtime"]}
    driver = {corr: name for corr, name in r["driver"]}
    assert any(n.startswith("urEnqueueKernelLaunch") for n in runtime.values()), sorted(set(runtime.values()))
    assert any(n == "clEnqueueNDRangeKernel" for n in driver.values())

    # The kernel record carries the correlation ID of the SYCL launch that submitted it.
    assert [name for _, name in r["kernels"]] == ["vadd"], r["kernels"]
    (corr, _), = r["kernels"]
    assert runtime[corr].startswith("urEnqueueKernelLaunch"), runtime.get(corr)

    # The memcpy of 16 KiB is a copy record of the runtime's USM copy.
    copies = [(corr, n) for corr, n, size in r["copies"] if size == 4 * 4096]
    assert copies and any(runtime.get(c, "").startswith("urEnqueueUSMMemcpy") for c, _ in copies), (
        r["copies"],
        runtime,
    )
    assert r["dropped"] == 0 and r["pending"] == 0
    assert r["criticals"] == []
