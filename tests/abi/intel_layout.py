#!/usr/bin/env python3
"""Makes tests/abi/intel_pti_1.2.0_layout.txt, the table of Intel PTI's C ABI facts that
tests/intel_layout.rs checks libpti's Intel-face headers against.

The table is data: one fact per line, names and numbers, sorted, no header text.

    header <path>                       a header Intel installs (pti/<file>.h)
    size <type> <bytes>                 sizeof, for every typedef of Intel's headers
    align <type> <bytes>                _Alignof, likewise
    offset <type> <field> <bytes>       offsetof, for every field of every struct and union
    fieldsize <type> <field> <bytes>    sizeof that field
    tag <type> <struct|union|enum> <tag> 1
                                        the typedef names that tagged type
    enum <type> <constant> <value>      every enumerator of every enum
    define <name> <value>               every object-like macro whose value is an integer
                                        constant expression

Where the facts come from:

- The names (which typedefs, enums, enumerators, records, fields, macros) are read from Intel's
  headers with clang's JSON AST dump (`clang -Xclang -ast-dump=json`) and `clang -dM -E`, so the
  list is complete, not picked by hand.
- The numbers are what a C compiler computes for those names: the script generates a C program
  (one `fact()` call per fact, the same shape tests/intel_layout.rs generates from the table),
  compiles it against Intel's headers and runs it.
- Intel's 1.2.0 library (PyPI `intel-pti`, `lib/libpti_view.so.1`, which loads `lib/pti/libpti.so`)
  is asked, through a second small C program, for what it knows itself: its version
  (`ptiVersion`), the name of every API ID of the Level Zero and SYCL groups
  (`ptiViewGetApiIdName`), and the names its `ptiResultTypeToString`,
  `ptiCallbackDomainTypeToString` and `ptiCallbackPhaseTypeToString` give each value. The version
  must be `--version`. The API-ID enumerators of the table are the library's (`<function>_id`; a
  function the library lists under two IDs is `<function>_id` at the lower and
  `<function>_v2_id` at the higher, as Intel's headers name them), and every API-ID enumerator
  of the headers must be among them with the same value. An enumerator name the string functions
  give must have the headers' value; one the headers lack is added to the table from the
  library. The script stops on any disagreement.

Intel's headers come from a directory holding `pti/*.h` as Intel installs them, or `pti/*.h` and
`pti/pti_version.h.in` as Intel's source tree has them (`sdk/include` of intel/pti-gpu): the
template is configured as Intel's CMake does, with `--version`, and a `pti/pti_export.h` (which
Intel's CMake generates; it declares no fact) is supplied where the directory has none.

Usage (see the table's first lines for the exact command that made it):

    python3 tests/abi/intel_layout.py --headers DIR --intel-lib DIR --version 1.2.0 \
        --source 'WHERE THE HEADERS CAME FROM' [--ld-library-path DIR]... \
        -o tests/abi/intel_pti_1.2.0_layout.txt

It needs clang (clang-15 or clang), a C compiler (`cc`) and, for Intel's library to load here,
`libxptifw.so` on `--ld-library-path` (the SYCL runtime's, e.g. `.venv/lib` after
`cargo xtask setup`) and a `zesInit`: tests/c/zes_stub.c is compiled and preloaded for the older
Level Zero loaders that lack it.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The enums that name API IDs, by the pti_api_group_id enumerator of their group.
API_ID_ENUMS = {
    "PTI_API_GROUP_LEVELZERO": "pti_api_id_driver_levelzero",
    "PTI_API_GROUP_SYCL": "pti_api_id_runtime_sycl",
}
# The largest API ID asked of the library (IDs are 32-bit; Intel's are below 1000).
API_ID_LIMIT = 65536
# The enums whose enumerator names Intel's library prints, and the function that prints them.
NAMED_BY_LIBRARY = {
    "pti_result": ("ptiResultTypeToString", 1024),
    "pti_callback_domain": ("ptiCallbackDomainTypeToString", 256),
    "pti_callback_phase": ("ptiCallbackPhaseTypeToString", 256),
}

# The C helpers of the facts program; tests/intel_layout.rs emits the same.
FACTS_PRELUDE = r"""#include <stddef.h>
#include <stdio.h>
#define LAYOUT_SIGNED(x) _Generic((x), _Bool: 0, unsigned char: 0, unsigned short: 0, \
  unsigned int: 0, unsigned long: 0, unsigned long long: 0, default: 1)
static void fact(const char *label, int is_signed, long long s, unsigned long long u) {
  if (is_signed) printf("%s %lld\n", label, s); else printf("%s %llu\n", label, u);
}
#define FACT(label, x) fact(label, LAYOUT_SIGNED(x), (long long)(x), (unsigned long long)(x))
"""


def die(message):
    sys.exit(f"intel_layout.py: {message}")


def run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        die(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def clang():
    for name in ("clang-15", "clang"):
        if shutil.which(name):
            return name
    die("no clang found (clang-15 or clang)")


# === Intel's headers, staged ===


def stage(headers, version, out):
    """Copies Intel's pti/ headers into out/pti, configuring pti_version.h.in and supplying
    pti_export.h where needed; returns the sorted names of the installed headers."""
    src = Path(headers) / "pti"
    dst = Path(out) / "pti"
    dst.mkdir(parents=True)
    names = []
    for path in sorted(src.iterdir()):
        if path.suffix == ".h":
            shutil.copy(path, dst / path.name)
            names.append(path.name)
        elif path.name.endswith(".h.in"):
            major, minor, patch = version.split(".")
            text = path.read_text()
            for key, value in {
                "PTI_VERSION": version,
                "PROJECT_VERSION_MAJOR": major,
                "PROJECT_VERSION_MINOR": minor,
                "PROJECT_VERSION_PATCH": patch,
                "PTI_COMMIT_HASH": "unknown",
            }.items():
                text = text.replace(f"@{key}@", value)
            if "@" in re.sub(r"//.*|/\*.*?\*/", "", text, flags=re.S):
                die(f"{path.name}: a CMake variable is left unconfigured")
            name = path.name[: -len(".in")]
            (dst / name).write_text(text)
            names.append(name)
    if "pti_export.h" not in names:
        # Intel's CMake generates it (GenerateExportHeader); it only marks the exports.
        (dst / "pti_export.h").write_text(
            "#ifndef LAYOUT_STAND_IN_EXPORT_H\n#define LAYOUT_STAND_IN_EXPORT_H\n"
            '#define PTI_EXPORT __attribute__((visibility("default")))\n#endif\n'
        )
        names.append("pti_export.h")
    if "pti_version.h" not in names or "pti.h" not in names:
        die(f"{src} lacks pti.h or pti_version.h(.in)")
    return sorted(names)


def includes(names):
    return "".join(f"#include <pti/{name}>\n" for name in names)


# === Names, from clang's AST ===


def walk_files(node, current):
    """Follows the file of clang's JSON locations in document order (clang writes a location's
    file only when it changes); returns the file current after `node`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "includedFrom":
                continue
            if key == "file" and isinstance(value, str):
                current = value
            else:
                current = walk_files(value, current)
    elif isinstance(node, list):
        for value in node:
            current = walk_files(value, current)
    return current


def referenced_decl(node):
    """The id of the record or enum a typedef's type names, if any."""
    if isinstance(node, dict):
        if node.get("kind") in ("RecordType", "EnumType") and "decl" in node:
            return node["decl"]["id"]
        for key, value in node.items():
            if key in ("inner", "ownedTagDecl"):
                found = referenced_decl(value)
                if found:
                    return found
        if "ownedTagDecl" in node:
            return node["ownedTagDecl"]["id"]
    elif isinstance(node, list):
        for value in node:
            found = referenced_decl(value)
            if found:
                return found
    return None


def declarations(stage_dir, names):
    """Typedefs, records and enums declared in the staged headers."""
    tu = Path(stage_dir) / "all.c"
    tu.write_text(includes(names))
    dump = run([clang(), "-std=c11", f"-I{stage_dir}", "-Xclang", "-ast-dump=json",
                "-fsyntax-only", str(tu)])
    ast = json.loads(dump)
    pti_dir = str((Path(stage_dir) / "pti").resolve())
    current = None
    decls = []
    for node in ast["inner"]:
        current = walk_files(node.get("loc"), current)
        where = current
        current = walk_files({k: v for k, v in node.items() if k != "loc"}, current)
        if where and str(Path(where).resolve()).startswith(pti_dir + os.sep):
            decls.append(node)
    by_id = {node["id"]: node for node in decls}
    typedefs = {}  # typedef name -> referenced record/enum id or None
    for node in decls:
        if node["kind"] == "TypedefDecl":
            typedefs[node["name"]] = referenced_decl(node.get("inner"))
    named = {}
    for name, ref in typedefs.items():
        if ref in by_id:
            named.setdefault(ref, name)
    records, enums = [], []
    for node in decls:
        if node["kind"] == "RecordDecl" and node.get("completeDefinition"):
            if node["id"] not in named:
                die(f"record {node.get('name')} has no typedef: name it in the table's scheme")
            fields = []
            for child in node.get("inner", []):
                if child["kind"] == "FieldDecl":
                    if not child.get("name") or child.get("isBitfield"):
                        die(f"{named[node['id']]}: an anonymous or bit-field member")
                    fields.append(child["name"])
                elif child["kind"] == "RecordDecl":
                    die(f"{named[node['id']]}: a nested record")
            records.append((named[node["id"]], node["tagUsed"], node.get("name"), fields))
        elif node["kind"] == "EnumDecl":
            if node["id"] not in named:
                die(f"enum {node.get('name')} has no typedef")
            constants = [c["name"] for c in node.get("inner", []) if c["kind"] == "EnumConstantDecl"]
            enums.append((named[node["id"]], node.get("name"), constants))
    return sorted(typedefs), records, enums


def macro_candidates(stage_dir, names):
    """Object-like macros with a body that the staged headers define."""
    base = Path(stage_dir) / "base.c"
    # The system headers Intel's headers include, to subtract their macros.
    system = sorted(set(re.findall(r"#include\s*<([^>]+)>",
                                   "".join((Path(stage_dir) / "pti" / n).read_text() for n in names))))
    base.write_text("".join(f"#include <{h}>\n" for h in system))
    tu = Path(stage_dir) / "all.c"
    listing = lambda path: set(run([clang(), "-std=c11", f"-I{stage_dir}", "-dM", "-E", str(path)]).splitlines())
    found = []
    for line in sorted(listing(tu) - listing(base)):
        match = re.fullmatch(r"#define (\w+) (.+)", line)
        if match and match.group(2).strip():
            found.append(match.group(1))
    return found


def integer_macros(stage_dir, names, candidates):
    """The candidates whose value is an integer constant expression (a case label accepts it)."""
    kept = []
    for name in candidates:
        probe = Path(stage_dir) / "probe.c"
        probe.write_text(includes(names) + f"int main(void) {{ switch (0) {{ case ({name}): ; }} return 0; }}\n")
        done = subprocess.run(["cc", "-std=c11", f"-I{stage_dir}", "-fsyntax-only", str(probe)],
                              capture_output=True, text=True)
        if done.returncode == 0:
            kept.append(name)
    return kept


# === Numbers, from the compiler ===


def fact_lines(typedefs, records, enums, macros):
    """(label, C expression) for every valued fact."""
    facts = []
    for name in typedefs:
        facts.append((f"size {name}", f"sizeof({name})"))
        facts.append((f"align {name}", f"_Alignof({name})"))
    for name, tag_kind, tag, fields in records:
        if tag:
            facts.append((f"tag {name} {tag_kind} {tag}",
                          f"_Generic(({name} *)0, {tag_kind} {tag} *: 1, default: 0)"))
        for field in fields:
            facts.append((f"offset {name} {field}", f"offsetof({name}, {field})"))
            facts.append((f"fieldsize {name} {field}", f"sizeof((({name} *)0)->{field})"))
    for name, tag, constants in enums:
        if tag:
            facts.append((f"tag {name} enum {tag}", f"_Generic(({name} *)0, enum {tag} *: 1, default: 0)"))
        for constant in constants:
            facts.append((f"enum {name} {constant}", constant))
    for name in macros:
        facts.append((f"define {name}", name))
    return facts


def facts_program(names, facts):
    lines = [FACTS_PRELUDE, includes(names)]
    lines += [f'static void f{i}(void) {{ FACT("{label}", {expr}); }}\n' for i, (label, expr) in enumerate(facts)]
    lines.append("int main(void) {\n")
    lines += [f"  f{i}();\n" for i in range(len(facts))]
    lines.append("  return 0;\n}\n")
    return "".join(lines)


def evaluate(stage_dir, names, facts):
    source = Path(stage_dir) / "facts.c"
    source.write_text(facts_program(names, facts))
    exe = Path(stage_dir) / "facts"
    run(["cc", "-std=c11", "-Wall", "-Werror", f"-I{stage_dir}", str(source), "-o", str(exe)])
    values = {}
    for line in run([str(exe)]).splitlines():
        label, value = line.rsplit(" ", 1)
        values[label] = value
    if len(values) != len(facts):
        die(f"the facts program printed {len(values)} facts of {len(facts)}")
    return values


# === What Intel's library says ===

LIBRARY_PROBE = r"""#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <pti/pti_view.h>
#include <pti/pti_callback.h>

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) { fprintf(stderr, "no %s: %s\n", name, dlerror()); exit(2); }
  return p;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
  pti_version (*version)(void) = (pti_version (*)(void))sym(lib, "ptiVersion");
  pti_result (*api_name)(pti_api_group_id, uint32_t, const char **) =
      (pti_result (*)(pti_api_group_id, uint32_t, const char **))sym(lib, "ptiViewGetApiIdName");
  const char *(*result_name)(pti_result) = (const char *(*)(pti_result))sym(lib, "ptiResultTypeToString");
  const char *(*domain_name)(pti_callback_domain) =
      (const char *(*)(pti_callback_domain))sym(lib, "ptiCallbackDomainTypeToString");
  const char *(*phase_name)(pti_callback_phase) =
      (const char *(*)(pti_callback_phase))sym(lib, "ptiCallbackPhaseTypeToString");
  pti_version v = version();
  printf("version %u.%u.%u\n", v._major, v._minor, v._patch);
  static const struct { const char *name; pti_api_group_id id; } groups[] = {
@GROUPS@  };
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
    unsigned found = 0;
    for (uint32_t id = 0; id < @ID_LIMIT@u; id++) {
      const char *name = NULL;
      if (api_name(groups[g].id, id, &name) == PTI_SUCCESS && name) {
        printf("api %s %u %s\n", groups[g].name, id, name);
        found++;
      }
    }
    if (!found) { fprintf(stderr, "no API ID named for %s: did the library load?\n", groups[g].name); return 3; }
  }
  for (int i = 0; i < @RESULT_LIMIT@; i++) printf("named pti_result %d %s\n", i, result_name((pti_result)i));
  for (int i = 0; i < @DOMAIN_LIMIT@; i++) printf("named pti_callback_domain %d %s\n", i, domain_name((pti_callback_domain)i));
  for (int i = 0; i < @PHASE_LIMIT@; i++) printf("named pti_callback_phase %d %s\n", i, phase_name((pti_callback_phase)i));
  return 0;
}
"""


def ask_library(stage_dir, intel_lib, ld_paths):
    source = Path(stage_dir) / "library_probe.c"
    text = LIBRARY_PROBE.replace(
        "@GROUPS@", "".join(f'    {{"{g}", {g}}},\n' for g in API_ID_ENUMS)
    ).replace("@ID_LIMIT@", str(API_ID_LIMIT))
    for enum, key in (("pti_result", "RESULT"), ("pti_callback_domain", "DOMAIN"), ("pti_callback_phase", "PHASE")):
        text = text.replace(f"@{key}_LIMIT@", str(NAMED_BY_LIBRARY[enum][1]))
    source.write_text(text)
    exe = Path(stage_dir) / "library_probe"
    run(["cc", "-std=c11", "-Wall", "-Werror", f"-I{stage_dir}", str(source), "-ldl", "-o", str(exe)])
    stub = Path(stage_dir) / "libzes_stub.so"
    run(["cc", "-shared", "-fPIC", str(REPO / "tests/c/zes_stub.c"), "-o", str(stub)])
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join([str(intel_lib)] + [str(p) for p in ld_paths])
    env["LD_PRELOAD"] = str(stub)
    out = run([str(exe), str(Path(intel_lib) / "libpti_view.so.1")], env=env)
    version, api, named = None, {}, {}
    for line in out.splitlines():
        parts = line.split()
        if parts[0] == "version":
            version = parts[1]
        elif parts[0] == "api":
            api.setdefault(parts[1], []).append((int(parts[2]), parts[3]))
        elif parts[0] == "named" and len(parts) == 4:
            named.setdefault(parts[1], []).append((parts[3], int(parts[2])))
    return version, api, named


def library_enumerators(api, named):
    """{enum type: {constant: value}} from the library: API-ID enumerators, and the names the
    string functions give exactly one value (a string returned for many values is a fallback)."""
    result = {}
    for group, ids in api.items():
        enum = API_ID_ENUMS[group]
        seen, constants = {}, {}
        for value, function in sorted(ids):
            count = seen.get(function, 0) + 1
            seen[function] = count
            if count > 2:
                die(f"{function} has more than two IDs in {group}")
            constants[f"{function}_id" if count == 1 else f"{function}_v2_id"] = value
        result[enum] = constants
    for enum, pairs in named.items():
        counts = {}
        for name, _ in pairs:
            counts[name] = counts.get(name, 0) + 1
        result[enum] = {
            name: value for name, value in pairs
            if counts[name] == 1 and re.fullmatch(r"PTI_[A-Z0-9_]+", name)
        }
    return result


# === The table ===


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--headers", required=True, help="directory holding Intel's pti/*.h")
    parser.add_argument("--intel-lib", required=True, help="directory holding Intel's libpti_view.so.1 and pti/libpti.so")
    parser.add_argument("--version", required=True, help="Intel PTI's version, as its library reports it")
    parser.add_argument("--source", required=True, help="where the headers came from, for the table's comment")
    parser.add_argument("--ld-library-path", action="append", default=[], help="where libxptifw.so is")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as stage_dir:
        names = stage(args.headers, args.version, stage_dir)
        typedefs, records, enums = declarations(stage_dir, names)
        macros = integer_macros(stage_dir, names, macro_candidates(stage_dir, names))
        facts = fact_lines(typedefs, records, enums, macros)
        values = evaluate(stage_dir, names, facts)
        version, api, named = ask_library(stage_dir, args.intel_lib, args.ld_library_path)

    if version != args.version:
        die(f"Intel's library says it is {version}, not {args.version}")
    from_headers = {}
    for label, value in values.items():
        parts = label.split()
        if parts[0] == "enum":
            from_headers.setdefault(parts[1], {})[parts[2]] = int(value)
    added = []
    for enum, constants in library_enumerators(api, named).items():
        header = from_headers.get(enum)
        if header is None:
            die(f"the headers have no enum {enum}")
        for name, value in constants.items():
            if name in header and header[name] != value:
                die(f"{enum} {name}: the headers say {header[name]}, the library {value}")
            if name not in header:
                added.append(f"enum {enum} {name} {value}")
        if enum in (API_ID_ENUMS[g] for g in api):
            for name, value in header.items():
                if value != 0 and constants.get(name) != value:
                    die(f"{enum} {name} = {value} in the headers, not in the library")

    table = sorted([f"header pti/{name}" for name in names]
                   + [f"{label} {value}" for label, value in values.items()] + added)
    command = " ".join(["python3 tests/abi/intel_layout.py", "--headers DIR",
                        f"--intel-lib {args.intel_lib}", f"--version {args.version}",
                        f"--source {shlex.quote(args.source)}"]
                       + [f"--ld-library-path {p}" for p in args.ld_library_path]
                       + [f"-o {args.output}"])
    by_enum = {}
    for line in added:
        by_enum[line.split()[1]] = by_enum.get(line.split()[1], 0) + 1
    kinds = {}
    for line in table:
        kinds[line.split()[0]] = kinds.get(line.split()[0], 0) + 1
    comment = [
        f"# Intel PTI {args.version}'s C ABI, as facts (names and numbers; no header text), one a line: "
        "made by tests/abi/intel_layout.py (its doc says how), checked by tests/intel_layout.rs.",
        f"# Headers: {args.source}. Library: Intel PTI {version} (PyPI intel-pti=={version}), "
        f"which gave its version and the enumerators the headers lack: "
        + (", ".join(f"{n} of {e}" for e, n in sorted(by_enum.items())) or "none") + ".",
        "# Counts: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + f". Command: {command}",
    ]
    Path(args.output).write_text("\n".join(comment + table) + "\n")
    print(f"wrote {args.output}: {len(table)} facts ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}); "
          f"{len(added)} from the library:")
    for line in added:
        print(f"  {line}")


if __name__ == "__main__":
    main()
