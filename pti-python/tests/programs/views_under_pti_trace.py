"""Under pti-trace, starting Views fails clearly (the collector holds libpti's views)."""
import json

import libpti

try:
    libpti.Views("DRIVER_API").start()
    print("RESULT", json.dumps({"started": True}))
except RuntimeError as e:
    print("RESULT", json.dumps({"started": False, "error": str(e)}))
