#!/usr/bin/env python3
"""Checks the one-way order among the files of each shim module (`make check-layers`).

Two graphs are read. Calls come from the built objects: within one module directory, file A
calls file B when A.o has an undefined symbol that B.o defines (`nm`). Includes come from the
sources: every `#include "..."` line of a module's .c, .h, .def and .S files. A module that has a
layer table, shim/<module>/layers.txt, must obey it:
  - a file may call files of a lower layer, and files of its own layer as long as no cycle forms;
    a call from a lower layer to a higher one fails, naming the edge and its symbols;
  - a file may include headers of its own layer or below; a header takes the layer of its .c (or
    .S) file, or has a row of its own (a header shared by several files, a table of `.def` rows);
    an include of a higher layer's header fails, naming the line; includes form no cycle;
  - across modules a file may include only the headers the other module names as its face;
  - every object and header of the module must be in the table (a header through its .c), every
    file in the table must exist, and every layer has a name.
A module without a layers.txt is not checked yet; the output says so.

With --tool-obj and --tool-src the dlsync command (tools/) is checked too, as one more module named
`tools` under the same rules, with its own tools/layers.txt. Its objects skip the shim files it
compiles in (the `shim` folder of its object directory); its include lines also resolve through
the shim folder (the command is built with -I shim), and may name a shim module's header outside
that module's face only when a `shared` line lists it: the headers of the shim files the command
compiles in (tools/module.mk, TOOL_SHARED).

layers.txt, one entry a line, '#' starts a comment:
  <layer> <file>          the file's layer, 0 the lowest
  layer <layer> <name>    the layer's name: a few words saying what its files are
  face <header>...        headers other modules may include (none when no line says so)
  shared <module/header>... (tools only) other modules' headers it may include beside their face

  scripts/check-layers.py [--obj build/obj/shim] [--src shim]   check every module with a table
      [--tool-obj build/obj/tools --tool-src tools]             and the command
  scripts/check-layers.py --cycles [...]                         list each module's cycles
                                                                 (checked or not); never fails
  scripts/check-layers.py --self-test                            plant violations, expect failures
                                                                 (prints cmocka-style counts)
Exit status: 0 when every checked module obeys its table, 1 otherwise, 2 on bad usage.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import selftest


def read_objects(mod_obj, skip=()):
    """Returns {file: (defined set, undefined set)} for every .o under one module's object dir
    but its top-level folders named in skip; a file is named by its source path inside the module
    (hb.c, x86_64/trampoline.S)."""
    files = {}
    for root, dirs, names in os.walk(mod_obj):
        if root == mod_obj:
            dirs[:] = [d for d in dirs if d not in skip]
        for name in sorted(names):
            if not name.endswith(".o"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, mod_obj)[:-2]
            rel += ".S" if os.sep + "x86_64" + os.sep in os.sep + rel else ".c"
            out = subprocess.run(["nm", path], check=True, capture_output=True, text=True).stdout
            defined, undefined = set(), set()
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] in ("U", "w"):
                    undefined.add(parts[1])
                elif len(parts) == 3 and parts[1].isupper() and parts[1] != "U":
                    defined.add(parts[2])
            files[rel] = (defined, undefined)
    return files


def edges_of(files):
    """Returns {(a, b): sorted symbols} for every call from file a to file b."""
    owner = {}
    for f, (defined, _) in files.items():
        for s in defined:
            owner[s] = f
    edges = {}
    for a, (_, undefined) in files.items():
        for s in undefined:
            b = owner.get(s)
            if b is not None and b != a:
                edges.setdefault((a, b), []).append(s)
    return {e: sorted(v) for e, v in edges.items()}


def cycles_of(nodes, edges):
    """Tarjan: the strongly connected components of more than one file, each sorted."""
    succ = {n: [] for n in nodes}
    for a, b in edges:
        if a in succ and b in succ:
            succ[a].append(b)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return sorted(out)


HEADERS = (".h", ".def")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


class Table:
    """One module's layers.txt: layer of each listed file, names of the layers, its face."""

    def __init__(self):
        self.layer, self.names, self.face, self.shared = {}, {}, set(), set()

    def of(self, f):
        """The layer of file f: its row, else (for a header) its .c or .S file's row; or None."""
        if f in self.layer:
            return self.layer[f]
        stem, ext = os.path.splitext(f)
        if ext in HEADERS:
            for own in (stem + ".c", stem + ".S"):
                if own in self.layer:
                    return self.layer[own]
        return None


def read_table(path):
    """Returns the Table of a layers.txt (see the module comment for its lines)."""
    table = Table()
    with open(path) as f:
        for num, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] == "layer" and len(words) >= 3 and words[1].isdigit():
                table.names[int(words[1])] = " ".join(words[2:])
            elif words[0] == "face" and len(words) >= 2:
                table.face.update(words[1:])
            elif words[0] == "shared" and len(words) >= 2:
                table.shared.update(words[1:])
            elif len(words) == 2 and words[0].isdigit():
                if words[1] in table.layer:
                    raise ValueError(f"{path}:{num}: {words[1]} listed twice")
                table.layer[words[1]] = int(words[0])
            else:
                raise ValueError(f"{path}:{num}: expected '<layer> <file>', "
                                 f"'layer <layer> <name>' or 'face <header>...'")
    return table


def module_dirs(src):
    """{module: its real directory} for every directory under src."""
    return {d: os.path.realpath(os.path.join(src, d)) for d in sorted(os.listdir(src))
            if os.path.isdir(os.path.join(src, d))}


def read_includes(src, mod, places=None, roots=(), base=None):
    """Returns [(file, line number, included module, included file)] for every `#include "..."`
    of module mod's sources (under base, by default src/mod) that names a file of a module of
    places ({module: directory}, by default every directory under src); an include resolves beside
    its file first, then under each of roots (files are named inside their module)."""
    out = []
    base = base or os.path.join(src, mod)
    places = places or module_dirs(src)
    for root, _dirs, names in os.walk(base):
        for name in sorted(names):
            if not name.endswith((".c", ".S") + HEADERS):
                continue
            path = os.path.join(root, name)
            with open(path, errors="replace") as f:
                for num, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    found = [os.path.realpath(os.path.join(d, m.group(1)))
                             for d in (root,) + tuple(roots)]
                    found = [t for t in found if os.path.isfile(t)]
                    owner = [(m_, d) for t in found[:1] for m_, d in places.items()
                             if t.startswith(d + os.sep)]
                    if not owner:
                        continue
                    target, (tmod, tdir) = found[0], owner[0]
                    out.append((os.path.relpath(path, base), num, tmod,
                                os.path.relpath(target, tdir).replace(os.sep, "/")))
    return out


def headers_of(src, mod=None):
    """The headers and .def tables of module mod (of the directory src when mod is None), named
    inside it."""
    base = os.path.join(src, mod) if mod else src
    return {os.path.relpath(os.path.join(r, n), base) for r, _d, names in os.walk(base)
            for n in names if n.endswith(HEADERS)}


def check_includes(name, includes, table, faces):
    """Returns the violations of one module's include lines: upward, cycles, other modules' private
    headers. faces is {module: set of face headers} for the modules that have a table."""
    errors, edges = [], set()
    for f, num, mod, target in includes:
        if mod != name:
            if mod in faces and target not in faces[mod] and f"{mod}/{target}" not in table.shared:
                errors.append(f"private header: {name}/{f}:{num} includes {mod}/{target}, "
                              f"which is not in {mod}'s face")
            continue
        edges.add((f, target))
        lf, lt = table.of(f), table.of(target)
        if lf is not None and lt is not None and lt > lf:
            errors.append(f"upward include: {name}/{f}:{num} (layer {lf}) -> {name}/{target} "
                          f"(layer {lt})")
    for comp in cycles_of({f for e in edges for f in e}, edges):
        errors.append(f"include cycle in {name}: {' '.join(comp)}")
    return errors


def check_module(name, files, table, headers=(), includes=(), faces=None):
    """Returns the list of violations of one module against its table: its objects (files), its
    headers and its include lines (read_includes); faces as check_includes takes them."""
    errors = []
    layer = table.layer
    for f in sorted(files):
        if f not in layer:
            errors.append(f"{name}/{f}: not in {name}/layers.txt")
    for f in sorted(headers):
        if table.of(f) is None:
            errors.append(f"{name}/{f}: not in {name}/layers.txt (a header without a .c needs a row)")
    for f in sorted(layer):
        if f not in files and f not in headers:
            errors.append(f"{name}/layers.txt: {f} has no " +
                          ("header" if f.endswith(HEADERS) else "object"))
    for f in sorted(table.face):
        if f not in headers:
            errors.append(f"{name}/layers.txt: face {f} is no header of {name}")
    for n in sorted(set(layer.values()) - set(table.names)):
        errors.append(f"{name}/layers.txt: layer {n} has no name (a 'layer {n} <name>' line)")
    edges = edges_of(files)
    for (a, b), syms in sorted(edges.items()):
        if a in layer and b in layer and layer[a] < layer[b]:
            errors.append(f"upward call: {name}/{a} (layer {layer[a]}) -> {name}/{b} "
                          f"(layer {layer[b]}): {', '.join(syms)}")
    for n in sorted(set(layer.values())):
        same = {f for f in files if layer.get(f) == n}
        flat = {e for e in edges if e[0] in same and e[1] in same}
        for comp in cycles_of(same, flat):
            inner = [f"{a} -> {b} ({', '.join(edges[(a, b)])})" for a, b in sorted(flat)
                     if a in comp and b in comp]
            errors.append(f"cycle in {name} layer {n}: {' '.join(comp)}: " + "; ".join(inner))
    errors += check_includes(name, includes, table, faces or {})
    return errors


def run(obj, src, cycles_only=False, out=sys.stdout, tool=None):
    """Checks (or, with cycles_only, lists the cycles of) every module, and the command when tool
    is (its object directory, its source directory); returns the exit status."""
    bad = 0
    mods = sorted(d for d in os.listdir(obj) if os.path.isdir(os.path.join(obj, d)))
    if not mods:
        print(f"check-layers: no module objects under {obj} (build the shim first)", file=out)
        return 1
    places = module_dirs(src)
    # (name, object dir, source dir, object folders to skip, include roots)
    specs = [(mod, os.path.join(obj, mod), os.path.join(src, mod), (), ()) for mod in mods]
    if tool:
        places["tools"] = os.path.realpath(tool[1])
        specs.append(("tools", tool[0], tool[1], ("shim",), (src,)))
    tables, faces = {}, {}
    for name, _o, sdir, _s, _r in specs:
        path = os.path.join(sdir, "layers.txt")
        if os.path.exists(path):
            try:
                tables[name] = read_table(path)
                faces[name] = tables[name].face
            except ValueError as e:
                tables[name] = e
    for name, odir, sdir, skip, roots in specs:
        files = read_objects(odir, skip)
        includes = read_includes(None, name, places, roots, base=sdir)
        if cycles_only:
            edges = edges_of(files)
            comps = cycles_of(set(files), set(edges))
            incl = {(f, t) for f, _n, m, t in includes if m == name}
            comps += [c + ["(includes)"] for c in cycles_of({f for e in incl for f in e}, incl)]
            print(f"{name}: {len(comps)} cycle(s)" + "".join(
                f"\n  {' '.join(c)}" for c in comps), file=out)
            continue
        table = tables.get(name)
        if table is None:
            print(f"{name}: not checked (no {name}/layers.txt yet)", file=out)
            continue
        if isinstance(table, ValueError):
            errors = [str(table)]
        else:
            errors = check_module(name, files, table, headers_of(sdir), includes, faces)
            for entry in sorted(table.shared):
                mod, _, rel = entry.partition("/")
                if mod not in places or not os.path.isfile(os.path.join(places[mod], rel)):
                    errors.append(f"{name}/layers.txt: shared {entry} is no header of a module")
        if errors:
            bad = 1
            for e in errors:
                print(f"check-layers: {e}", file=out)
            print(f"{name}: FAILED ({len(errors)} violation(s))", file=out)
        else:
            print(f"{name}: ok ({len(files)} files, {len(headers_of(sdir))} headers, "
                  f"{len(set(table.layer.values()))} layers)", file=out)
    return bad


TABLE_HEAD = "# layer file: a file may call lower layers, and its own layer without a cycle\n"


def plant(root, sources, table, others=None):
    """Builds a one-module tree under root: module m's sources {file: text} (.c files are
    compiled), its table text or None, and others {module/file: text} (a 'layers.txt' among them
    gives that module a table)."""
    os.makedirs(os.path.join(root, "obj", "m"))
    os.makedirs(os.path.join(root, "src", "m"))
    for path, text in (others or {}).items():
        os.makedirs(os.path.join(root, "src", os.path.dirname(path)), exist_ok=True)
        os.makedirs(os.path.join(root, "obj", os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, "src", path), "w") as f:
            f.write(text)
    for name, text in sources.items():
        with open(os.path.join(root, "src", "m", name), "w") as f:
            f.write(text)
    for name in sources:
        c = os.path.join(root, "src", "m", name)
        if name.endswith(".c"):
            subprocess.run([os.environ.get("CC", "cc"), "-c", c, "-o",
                            os.path.join(root, "obj", "m", name[:-2] + ".o")], check=True)
    if table is not None:
        with open(os.path.join(root, "src", "m", "layers.txt"), "w") as f:
            f.write(TABLE_HEAD + table)


def self_test(extra_obj=None, extra_src=None, tool=None):
    """Plants clean and violating modules and commands and expects the verdicts; prints
    cmocka-style counts (run-tests.sh counts them). With extra_obj/extra_src it also checks that
    real tree, and the command when tool is (its objects, its sources)."""
    low = "int low(void) { return 1; }\n"
    high = "int low(void);\nint high(void) { return low(); }\n"
    up = "int high(void);\nint low(void) { return high(); }\n"
    peer_a = "int b(void);\nint a(int n) { return n ? b() : 0; }\n"
    peer_b = "int a(int);\nint b(void) { return a(0); }\n"
    names = "layer 0 bottom\nlayer 1 top\n"
    two = names + "0 low.c\n1 high.c\n"
    high_h = "int high(void);\n"
    low_up = '#include "high.h"\n' + low
    other = {"n/layers.txt": "layer 0 all\n0 pub.h\n0 priv.h\nface pub.h\n", "n/pub.h": "",
             "n/priv.h": ""}
    cases = [
        ("downward call passes", {"low.c": low, "high.c": high}, two, 0, None, None),
        ("upward call fails, naming the edge", {"low.c": up, "high.c": high}, two,
         1, "upward call: m/low.c (layer 0) -> m/high.c (layer 1): high", None),
        ("cycle within a layer fails", {"a.c": peer_a, "b.c": peer_b}, "layer 0 x\n0 a.c\n0 b.c\n",
         1, "cycle in m layer 0: a.c b.c", None),
        ("unlisted file fails", {"low.c": low, "high.c": high}, names + "0 low.c\n", 1,
         "m/high.c: not in m/layers.txt", None),
        ("module without a table is not checked", {"a.c": peer_a, "b.c": peer_b}, None, 0,
         "m: not checked", None),
        ("downward include passes", {"low.c": low, "high.c": '#include "low.h"\n' + high,
                                     "low.h": "int low(void);\n"}, two, 0, None, None),
        ("upward include fails, naming the line",
         {"low.c": low_up, "high.c": high, "high.h": high_h}, two, 1,
         "upward include: m/low.c:1 (layer 0) -> m/high.h (layer 1)", None),
        ("include cycle fails", {"low.c": low, "high.c": high, "x.h": '#include "y.h"\n',
                                 "y.h": '#include "x.h"\n'}, two + "0 x.h\n0 y.h\n", 1,
         "include cycle in m: x.h y.h", None),
        ("header without a row fails", {"low.c": low, "high.c": high, "t.h": ""}, two, 1,
         "m/t.h: not in m/layers.txt", None),
        ("layer without a name fails", {"low.c": low, "high.c": high}, "layer 0 bottom\n0 low.c\n"
         "1 high.c\n", 1, "layer 1 has no name", None),
        ("another module's face passes", {"low.c": '#include "../n/pub.h"\n' + low,
                                          "high.c": high}, two, 0, None, other),
        ("another module's private header fails",
         {"low.c": '#include "../n/priv.h"\n' + low, "high.c": high}, two, 1,
         "private header: m/low.c:1 includes n/priv.h, which is not in n's face", other),
    ]
    tally = selftest.Tally()
    for name, sources, table, want_rc, want_text, others in cases:
        with tempfile.TemporaryDirectory() as root:
            plant(root, sources, table, others)
            rc, text = selftest.captured(run, os.path.join(root, "obj"), os.path.join(root, "src"))
        tally.case(name, rc, text, want_rc, want_text)
    # The command: module m is planted clean beside it; the command's sources include module n's
    # headers through the shim folder, as `-I shim` lets them.
    ok_m = {"low.c": low, "high.c": high}
    tool_cases = [
        ("the command's downward call and include pass",
         {"low.c": low, "high.c": '#include "low.h"\n' + high, "low.h": ""}, two, 0, None),
        ("the command's upward include fails", {"low.c": low_up, "high.c": high, "high.h": high_h},
         two, 1, "upward include: tools/low.c:1 (layer 0) -> tools/high.h (layer 1)"),
        ("the command's upward call fails", {"low.c": up, "high.c": high}, two, 1,
         "upward call: tools/low.c (layer 0) -> tools/high.c (layer 1): high"),
        ("the command including a private header fails",
         {"low.c": '#include "n/priv.h"\n' + low, "high.c": high}, two, 1,
         "private header: tools/low.c:1 includes n/priv.h, which is not in n's face"),
        ("the command including a shared header passes",
         {"low.c": '#include "n/priv.h"\n' + low, "high.c": high}, two + "shared n/priv.h\n", 0,
         None),
        ("a shared line naming no header fails", ok_m, two + "shared n/gone.h\n", 1,
         "shared n/gone.h is no header of a module"),
    ]
    for name, sources, table, want_rc, want_text in tool_cases:
        with tempfile.TemporaryDirectory() as root:
            plant(root, ok_m, two, other)
            tsrc, tobj = os.path.join(root, "tools"), os.path.join(root, "tool-obj")
            os.makedirs(os.path.join(tobj, "shim"))
            os.makedirs(tsrc)
            for f, text in sources.items():
                with open(os.path.join(tsrc, f), "w") as out:
                    out.write(text)
            for f in sources:
                if f.endswith(".c"):
                    subprocess.run([os.environ.get("CC", "cc"), "-c", os.path.join(tsrc, f),
                                    "-I", os.path.join(root, "src"), "-o",
                                    os.path.join(tobj, f[:-2] + ".o")], check=True)
            with open(os.path.join(tobj, "shim", "copy.o"), "w"):
                pass  # a shim file compiled in: skipped, so no row is needed for it
            with open(os.path.join(tsrc, "layers.txt"), "w") as out:
                out.write(TABLE_HEAD + table)
            rc, text = selftest.captured(run, os.path.join(root, "obj"), os.path.join(root, "src"),
                                         tool=(tobj, tsrc))
        tally.case(name, rc, text, want_rc, want_text)
    if extra_obj:
        rc, text = selftest.captured(run, extra_obj, extra_src, tool=tool)
        print(text, end="")
        tally.verdict("the shim" + (" and the command obey their" if tool else " obeys its") +
                      " layer tables", rc == 0)
    return tally.done()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--obj", default="build/obj/shim", help="the modules' object directories")
    ap.add_argument("--src", default="shim", help="the modules' source directories")
    ap.add_argument("--tool-obj", help="the command's object directory: check tools/ too")
    ap.add_argument("--tool-src", default="tools", help="the command's source directory")
    ap.add_argument("--cycles", action="store_true", help="list every module's cycles")
    ap.add_argument("--self-test", action="store_true", help="plant violations, expect failures")
    ap.add_argument("--self-test-tree", action="store_true",
                    help="with --self-test, also check the tree at --obj/--src")
    a = ap.parse_args()
    tool = (a.tool_obj, a.tool_src) if a.tool_obj else None
    if a.self_test:
        return self_test(a.obj if a.self_test_tree else None, a.src, tool)
    return run(a.obj, a.src, cycles_only=a.cycles, tool=tool)


if __name__ == "__main__":
    sys.exit(main())
