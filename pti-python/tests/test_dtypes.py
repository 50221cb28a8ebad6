"""The NumPy dtypes of the records are the C layouts of pti_view.h and pti_ext.h: a C program
generated from the dtypes prints sizeof and offsetof of each struct and member, compiled
against the headers, and every figure must match."""
import subprocess

from conftest import ROOT, result


def test_record_dtypes_match_the_c_headers(venv, tmp_path):
    layouts = result(venv.run(["dump_layouts.py"]))
    assert {"DRIVER_API", "DEVICE_GPU_KERNEL", "DEVICE_GPU_MEM_COPY", "EXT_KERNEL_LAUNCH"} <= set(layouts)
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "pti/pti_view.h"', '#include "pti/pti_ext.h"', "int main(void) {"]
    expected = []
    for kind, (struct, size, fields) in sorted(layouts.items()):
        lines.append(f'  printf("%zu\\n", sizeof({struct}));')
        expected.append(size)
        covered = 0
        for name, offset, field_size in fields:
            lines.append(f'  printf("%zu\\n", offsetof({struct}, _{name}));')
            lines.append(f'  printf("%zu\\n", sizeof((({struct}*)0)->_{name}));')
            expected += [offset, field_size]
            # No member is missing: only alignment padding lies between fields.
            assert 0 <= offset - covered < 8, (struct, name)
            covered = offset + field_size
        assert 0 <= size - covered < 8, struct
    lines += ["  return 0;", "}"]
    source = tmp_path / "layouts.c"
    source.write_text("\n".join(lines) + "\n")
    binary = tmp_path / "layouts"
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", str(ROOT / "include"), "-o", str(binary), str(source)], check=True)
    printed = [int(x) for x in subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.split()]
    assert printed == expected
    assert len(expected) > 200
