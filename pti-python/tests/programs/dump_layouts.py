"""Prints the installed package's record dtypes: {kind: [struct, itemsize, [[field, offset,
size]]]}."""
import json

import libpti
from libpti import _native

out = {}
for kind in libpti.ViewKind:
    try:
        dt = libpti.dtype(kind)
    except ValueError:
        continue
    struct = _native.record_layouts()[int(kind)][0]
    fields = [[name, dt.fields[name][1], dt.fields[name][0].itemsize] for name in dt.names]
    out[kind.name] = [struct, dt.itemsize, fields]
print("RESULT", json.dumps(out))
