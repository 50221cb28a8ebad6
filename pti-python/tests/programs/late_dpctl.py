"""Imports libpti after dpctl: the import fails, naming the SYCL runtime."""
import json

import dpctl  # noqa: F401

try:
    import libpti  # noqa: F401

    print("RESULT", json.dumps({"imported": True}))
except ImportError as e:
    print("RESULT", json.dumps({"imported": False, "error": str(e)}))
