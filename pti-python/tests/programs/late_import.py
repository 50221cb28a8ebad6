"""Imports libpti after PyOpenCL has initialised OpenCL: the import fails, naming the loader,
unless LIBPTI_ALLOW_LATE_IMPORT=1 (then it warns)."""
import json
import warnings

import pyopencl as cl

cl.get_platforms()
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import libpti  # noqa: F401
    print("RESULT", json.dumps({"imported": True, "warnings": [str(w.message) for w in caught]}))
except ImportError as e:
    print("RESULT", json.dumps({"imported": False, "error": str(e)}))
