#!/usr/bin/env python3
"""Checks the one-way order among the files of each shim module (`make check-layers`).

The graph comes from the built objects: within one module directory, file A calls file B when
A.o has an undefined symbol that B.o defines (`nm`). A module that has a layer table,
shim/<module>/layers.txt, must obey it:
  - a file may call files of a lower layer;
  - a file may call files of its own layer, as long as no cycle forms among them;
  - a call from a lower layer to a higher one fails, naming the edge and its symbols;
  - every object of the module must be in the table, and every file in the table must exist.
A module without a layers.txt is not checked yet; the output says so.

  scripts/check-layers.py [--obj build/obj/shim] [--src shim]   check every module with a table
  scripts/check-layers.py --cycles [...]                         list each module's cycles
                                                                 (checked or not); never fails
  scripts/check-layers.py --self-test                            plant violations, expect failures
                                                                 (prints cmocka-style counts)
Exit status: 0 when every checked module obeys its table, 1 otherwise, 2 on bad usage.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import selftest


def read_objects(mod_obj):
    """Returns {file: (defined set, undefined set)} for every .o under one module's object dir;
    a file is named by its source path inside the module (hb.c, x86_64/trampoline.S)."""
    files = {}
    for root, _dirs, names in os.walk(mod_obj):
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


def read_table(path):
    """Returns {file: layer} from a layers.txt: `<layer> <file>` per line, '#' starts a comment."""
    table = {}
    with open(path) as f:
        for num, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) != 2 or not line[0].isdigit():
                raise ValueError(f"{path}:{num}: expected '<layer> <file>'")
            if line[1] in table:
                raise ValueError(f"{path}:{num}: {line[1]} listed twice")
            table[line[1]] = int(line[0])
    return table


def check_module(name, files, table):
    """Returns the list of violations of one module against its table."""
    errors = []
    for f in sorted(files):
        if f not in table:
            errors.append(f"{name}/{f}: not in {name}/layers.txt")
    for f in sorted(table):
        if f not in files:
            errors.append(f"{name}/layers.txt: {f} has no object")
    edges = edges_of(files)
    for (a, b), syms in sorted(edges.items()):
        if a in table and b in table and table[a] < table[b]:
            errors.append(f"upward call: {name}/{a} (layer {table[a]}) -> {name}/{b} "
                          f"(layer {table[b]}): {', '.join(syms)}")
    for layer in sorted(set(table.values())):
        same = {f for f in files if table.get(f) == layer}
        flat = {e for e in edges if e[0] in same and e[1] in same}
        for comp in cycles_of(same, flat):
            inner = [f"{a} -> {b} ({', '.join(edges[(a, b)])})" for a, b in sorted(flat)
                     if a in comp and b in comp]
            errors.append(f"cycle in {name} layer {layer}: {' '.join(comp)}: " + "; ".join(inner))
    return errors


def run(obj, src, cycles_only=False, out=sys.stdout):
    """Checks (or, with cycles_only, lists the cycles of) every module; returns the exit status."""
    bad = 0
    mods = sorted(d for d in os.listdir(obj) if os.path.isdir(os.path.join(obj, d)))
    if not mods:
        print(f"check-layers: no module objects under {obj} (build the shim first)", file=out)
        return 1
    for mod in mods:
        files = read_objects(os.path.join(obj, mod))
        table_path = os.path.join(src, mod, "layers.txt")
        if cycles_only:
            edges = edges_of(files)
            comps = cycles_of(set(files), set(edges))
            print(f"{mod}: {len(comps)} cycle(s)" + "".join(
                f"\n  {' '.join(c)}" for c in comps), file=out)
            continue
        if not os.path.exists(table_path):
            print(f"{mod}: not checked (no {mod}/layers.txt yet)", file=out)
            continue
        try:
            errors = check_module(mod, files, read_table(table_path))
        except ValueError as e:
            errors = [str(e)]
        if errors:
            bad = 1
            for e in errors:
                print(f"check-layers: {e}", file=out)
            print(f"{mod}: FAILED ({len(errors)} violation(s))", file=out)
        else:
            print(f"{mod}: ok ({len(files)} files, {len(set(read_table(table_path).values()))} "
                  f"layers)", file=out)
    return bad


TABLE_HEAD = "# layer file: a file may call lower layers, and its own layer without a cycle\n"


def plant(root, sources, table):
    """Builds a one-module tree under root: sources {file: C text}, table text or None."""
    os.makedirs(os.path.join(root, "obj", "m"))
    os.makedirs(os.path.join(root, "src", "m"))
    for name, text in sources.items():
        c = os.path.join(root, "src", "m", name)
        with open(c, "w") as f:
            f.write(text)
        subprocess.run([os.environ.get("CC", "cc"), "-c", c, "-o",
                        os.path.join(root, "obj", "m", name[:-2] + ".o")], check=True)
    if table is not None:
        with open(os.path.join(root, "src", "m", "layers.txt"), "w") as f:
            f.write(TABLE_HEAD + table)


def self_test(extra_obj=None, extra_src=None):
    """Plants clean and violating modules and expects the verdicts; prints cmocka-style counts
    (run-tests.sh counts them). With extra_obj/extra_src it also checks that real tree."""
    low = "int low(void) { return 1; }\n"
    high = "int low(void);\nint high(void) { return low(); }\n"
    up = "int high(void);\nint low(void) { return high(); }\n"
    peer_a = "int b(void);\nint a(int n) { return n ? b() : 0; }\n"
    peer_b = "int a(int);\nint b(void) { return a(0); }\n"
    cases = [
        ("downward call passes", {"low.c": low, "high.c": high}, "0 low.c\n1 high.c\n", 0, None),
        ("upward call fails, naming the edge", {"low.c": up, "high.c": high}, "0 low.c\n1 high.c\n",
         1, "upward call: m/low.c (layer 0) -> m/high.c (layer 1): high"),
        ("cycle within a layer fails", {"a.c": peer_a, "b.c": peer_b}, "0 a.c\n0 b.c\n", 1,
         "cycle in m layer 0: a.c b.c"),
        ("unlisted file fails", {"low.c": low, "high.c": high}, "0 low.c\n", 1,
         "m/high.c: not in m/layers.txt"),
        ("module without a table is not checked", {"a.c": peer_a, "b.c": peer_b}, None, 0,
         "m: not checked"),
    ]
    tally = selftest.Tally()
    for name, sources, table, want_rc, want_text in cases:
        with tempfile.TemporaryDirectory() as root:
            plant(root, sources, table)
            rc, text = selftest.captured(run, os.path.join(root, "obj"), os.path.join(root, "src"))
        tally.case(name, rc, text, want_rc, want_text)
    if extra_obj:
        rc, text = selftest.captured(run, extra_obj, extra_src)
        print(text, end="")
        tally.verdict("the shim obeys its layer tables", rc == 0)
    return tally.done()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--obj", default="build/obj/shim", help="the modules' object directories")
    ap.add_argument("--src", default="shim", help="the modules' source directories")
    ap.add_argument("--cycles", action="store_true", help="list every module's cycles")
    ap.add_argument("--self-test", action="store_true", help="plant violations, expect failures")
    ap.add_argument("--self-test-tree", action="store_true",
                    help="with --self-test, also check the tree at --obj/--src")
    a = ap.parse_args()
    if a.self_test:
        return self_test(a.obj if a.self_test_tree else None, a.src)
    return run(a.obj, a.src, cycles_only=a.cycles)


if __name__ == "__main__":
    sys.exit(main())
