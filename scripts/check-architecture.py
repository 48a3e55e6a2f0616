#!/usr/bin/env python3
"""Checks docs/architecture.md's tables and size, and the shim's externs (make check-architecture).

The module table (header `| module | layers, bottom to top | role | calls |`):
  - has one row per directory shim/<module>/ (written `shim/<module>`), and no other row;
  - a module with a shim/<module>/layers.txt shows it in the layers column: the files of one
    layer separated by commas, layers separated by '<', lowest first, a name without an
    extension standing for a .c file; the column must hold the same files in the same layers.
    A module without a layers.txt shows '—';
  - the calls column names the other modules the module calls ('nothing' or '—' for none; a
    parenthesis after a name is a comment; 'the loader' is dlopen, dlsym, dlclose, dlmopen and
    dlvsym, which resolve to the hooks' interposed entry points). The modules must call one way:
    a cycle among the rows fails. With --obj, the column must be what the built objects call:
    module A calls module B when an object of A has an undefined symbol an object of B defines
    (`nm`).
The lock table (header `| # | lock | file | guards | taken while holding |`):
  - rows are numbered 1, 2, 3, ... in order, and that order is the acquisition order: the last
    column lists the numbers of the locks that may be held when the row's lock is taken, each of
    a row above, or '—' when it is taken with no lock held;
  - the lock column's first `code` is the lock's name, a variable or `variable.member`; a second
    `code` names its type when that is not pthread_mutex_t. The file column's `code` is its file
    under shim/;
  - every lock declared in shim/ (a variable or struct member of type pthread_mutex_t,
    dls_mutex (common/mutex.h: a pthread_mutex_t, and written so in the table), pthread_rwlock_t,
    pthread_spinlock_t or dls_spin, one per declaration; extern declarations
    do not count) has exactly one row, and every row names a lock declared in its file with that type (for
    `variable.member`, the member).
One rule of the tree beside the lock declarations: every `extern` declaration of a shim
variable or function (a `dls_` name) in shim/ carries DLS_HIDDEN (common/export.h says why).
The document's length and width, so that it stays a short read:
  - at most 400 lines;
  - every line at most 100 characters, but a table row (a line starting with '|'), which cannot
    wrap: each of its cells is at most 100 characters instead, except the module table's layers
    column, which the layers.txt files dictate.

  scripts/check-architecture.py [--doc docs/architecture.md] [--src shim] [--obj build/obj/shim]
  scripts/check-architecture.py --self-test [--self-test-tree ...]   plant wrong rows, expect
                                                                      failures (cmocka-style counts)
Exit status: 0 when the tables match the tree, 1 otherwise, 2 on bad usage.
"""
import argparse
import functools
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import selftest

MODULE_HEADER = ["module", "layers, bottom to top", "role", "calls"]
LOCK_HEADER = ["#", "lock", "file", "guards", "taken while holding"]
LOCK_TYPES = ("pthread_mutex_t", "dls_mutex", "pthread_rwlock_t", "pthread_spinlock_t", "dls_spin")
LOADER = {"dlopen", "dlsym", "dlclose", "dlmopen", "dlvsym"}
NONE = ("—", "-", "nothing", "")
MAX_LINES, MAX_WIDTH = 400, 100


def cells(line):
    """The cells of one markdown table row ('\\|' is a bar inside a cell)."""
    parts = line.strip().replace("\\|", "\0").strip("|").split("|")
    return [p.replace("\0", "|").strip() for p in parts]


def read_table(doc_lines, header):
    """Returns [(line number, cells)] of the table whose header row is `header`; raises
    ValueError when the document has no such table."""
    for i, line in enumerate(doc_lines):
        if line.startswith("|") and cells(line) == header:
            rows = []
            for j in range(i + 2, len(doc_lines)):
                if not doc_lines[j].startswith("|"):
                    break
                rows.append((j + 1, cells(doc_lines[j])))
            return rows
    raise ValueError("no table with the header | " + " | ".join(header) + " |")


def codes(text):
    """The `code` spans of a cell, in order."""
    return re.findall(r"`([^`]*)`", text)


def read_layers(path):
    """[set of files] per layer of a layers.txt, lowest first: its .c and .S files (headers with a
    row of their own and the layers' names and face are check-layers.py's)."""
    layers, check_layers = {}, load_check_layers()
    for f, n in check_layers.read_table(path).layer.items():
        if not f.endswith(check_layers.HEADERS):
            layers.setdefault(n, set()).add(f)
    return [layers[k] for k in sorted(layers)]


def parse_layers(text):
    """[set of files] per layer of a layers cell, lowest first."""
    out = []
    for group in text.replace("`", "").split("<"):
        names = set()
        for name in group.split(","):
            name = name.strip()
            if name:
                names.add(name if "." in os.path.basename(name) else name + ".c")
        out.append(names)
    return out


def parse_calls(text):
    """The set of names in a calls cell: modules and 'the loader'."""
    text = re.sub(r"\([^)]*\)", "", text).replace("`", "")
    names = {n.strip() for n in text.split(",")}
    return {n for n in names if n not in NONE}


def cycle_of(graph):
    """A cycle of graph {node: set of nodes} as a list, or None."""
    state = {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m, path + [m])
                if found:
                    return found
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n, [n])
            if found:
                return found
    return None


@functools.lru_cache(maxsize=None)
def load_check_layers():
    """scripts/check-layers.py as a module (its object and table readers), read once, leaving no bytecode beside it."""
    sys.dont_write_bytecode = True
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-layers.py")
    spec = importlib.util.spec_from_file_location("check_layers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def object_calls(obj, modules):
    """{module: set of modules or 'the loader' it calls}, read from the built objects."""
    read_objects = load_check_layers().read_objects
    defined, used = {}, {}
    for mod in modules:
        d = os.path.join(obj, mod)
        files = read_objects(d) if os.path.isdir(d) else {}
        used[mod] = set()
        for defs, undefs in files.values():
            for s in defs:
                defined[s] = mod
            used[mod] |= undefs
    calls = {}
    for mod in modules:
        by = {}
        for s in used[mod]:
            other = defined.get(s)
            if other is not None and other != mod:
                by.setdefault(other, set()).add(s)
        calls[mod] = {("the loader" if other == "hooks" and syms <= LOADER else other)
                      for other, syms in by.items()}
    return calls


def check_modules(doc_lines, src, obj=None):
    """Returns the errors of the module table."""
    errors = []
    rows = read_table(doc_lines, MODULE_HEADER)
    modules = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    seen, graph = {}, {}
    for num, row in rows:
        if len(row) != len(MODULE_HEADER):
            errors.append(f"line {num}: module row has {len(row)} cells, wanted "
                          f"{len(MODULE_HEADER)}")
            continue
        name = row[0].replace("`", "").strip().rstrip("/")
        if not name.startswith("shim/"):
            errors.append(f"line {num}: module {name!r} is not a shim/<module> directory")
            continue
        mod = name[len("shim/"):]
        if mod in seen:
            errors.append(f"line {num}: shim/{mod} has a row already (line {seen[mod]})")
            continue
        seen[mod] = num
        if mod not in modules:
            errors.append(f"line {num}: shim/{mod}: no such directory")
            continue
        table = os.path.join(src, mod, "layers.txt")
        shown = row[1].strip()
        if os.path.exists(table):
            try:
                want = read_layers(table)
            except ValueError as e:
                errors.append(str(e))
                continue
            got = parse_layers(shown)
            if got != want:
                fix = " < ".join(", ".join(n[:-2] if n.endswith(".c") else n for n in sorted(g))
                                 for g in want)
                errors.append(f"line {num}: shim/{mod}: the layers are not {mod}/layers.txt's; "
                              f"it reads: {fix}")
        elif shown not in NONE:
            errors.append(f"line {num}: shim/{mod} has no layers.txt: its layers cell must be "
                          f"'—'")
        graph[mod] = parse_calls(row[3])
    for mod in modules:
        if mod not in seen:
            errors.append(f"shim/{mod}: no row in the module table")
    for mod, callees in sorted(graph.items()):
        for c in sorted(callees - set(graph) - {"the loader"}):
            errors.append(f"line {seen[mod]}: shim/{mod} calls {c!r}, which is not a module of "
                          f"the table")
    cyc = cycle_of({m: c & set(graph) for m, c in graph.items()})
    if cyc:
        errors.append("the modules do not call one way: " + " -> ".join(cyc))
    if obj:
        actual = object_calls(obj, sorted(graph))
        for mod in sorted(graph):
            extra, stale = actual[mod] - graph[mod], graph[mod] - actual[mod]
            if extra:
                errors.append(f"line {seen[mod]}: shim/{mod} also calls "
                              f"{', '.join(sorted(extra))} (its objects)")
            if stale:
                errors.append(f"line {seen[mod]}: shim/{mod} does not call "
                              f"{', '.join(sorted(stale))} (its objects)")
    return errors


DECL = re.compile(r"^[ \t]*(?:static[ \t]+)?(?:volatile[ \t]+)?(" + "|".join(LOCK_TYPES) +
                  r")[ \t]+(\w+)[ \t]*(?:\[[^\]]*\][ \t]*)?([=;,])", re.M)


def strip_comments(text):
    """text without its C comments and string literals (newlines kept)."""
    pattern = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)
    def blank(m):
        return "\n" * m.group(0).count("\n") if m.group(0).startswith("/") else '""'
    return pattern.sub(blank, text)


def c_sources(src):
    """(path, text without comments) of every .c and .h file under src, in a stable order."""
    for root, dirs, names in os.walk(src):
        dirs.sort()
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                path = os.path.join(root, name)
                with open(path, errors="replace") as f:
                    yield path, strip_comments(f.read())


def declared_locks(src):
    """{(file under src, name): type} of every lock declared in src's .c and .h files."""
    locks = {}
    for path, text in c_sources(src):
        for m in DECL.finditer(text):
            if m.group(3) == ",":
                raise ValueError(f"{path}: {m.group(2)}: declare one lock per declaration")
            kind = "pthread_mutex_t" if m.group(1) == "dls_mutex" else m.group(1)
            locks[(os.path.relpath(path, src), m.group(2))] = kind
    return locks


EXTERN = re.compile(r"^[ \t]*extern[ \t]+([^;{]*);", re.M)


def unhidden_externs(src):
    """Errors for the `extern` declarations of `dls_` names in src's .c and .h files that lack
    DLS_HIDDEN (the declared name is the last identifier, past any array bounds)."""
    errors = []
    for path, text in c_sources(src):
        for m in EXTERN.finditer(text):
            decl = re.sub(r"\[[^\]]*\]", "", m.group(1))
            words = re.findall(r"\w+", decl.replace("DLS_HIDDEN", ""))
            if words and words[-1].startswith("dls_") and "DLS_HIDDEN" not in decl:
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f"{path}:{line}: extern {words[-1]} without DLS_HIDDEN")
    return errors


def check_locks(doc_lines, src):
    """Returns the errors of the lock table."""
    errors = []
    rows = read_table(doc_lines, LOCK_HEADER)
    locks = declared_locks(src)
    named, numbered = {}, True
    for i, (num, row) in enumerate(rows, 1):
        if len(row) != len(LOCK_HEADER):
            errors.append(f"line {num}: lock row has {len(row)} cells, wanted {len(LOCK_HEADER)}")
            continue
        if numbered and row[0] != str(i):
            errors.append(f"line {num}: lock row numbered {row[0]!r}, wanted {i} "
                          f"(rows count 1, 2, ...)")
            numbered = False
        lock, where = codes(row[1]), codes(row[2])
        if not lock or not where:
            errors.append(f"line {num}: the lock and file cells must each name a `code`")
            continue
        name, kind = lock[0], lock[1] if len(lock) > 1 else "pthread_mutex_t"
        key = (where[0], name.split(".")[-1])
        if key not in locks:
            errors.append(f"line {num}: {where[0]} declares no lock {key[1]} (no {name})")
        elif locks[key] != kind:
            errors.append(f"line {num}: {name} in {where[0]} is a {locks[key]}, not a {kind}")
        elif key in named:
            errors.append(f"line {num}: {name} in {where[0]} has a row already (line {named[key]})")
        else:
            named[key] = num
        held = row[4].strip()
        if held not in NONE:
            for n in (x.strip() for x in held.split(",")):
                if not n.isdigit() or not 1 <= int(n) < i:
                    errors.append(f"line {num}: 'taken while holding' names {n!r}, not a row above")
    for (where, name), kind in sorted(locks.items()):
        if (where, name) not in named:
            errors.append(f"{src}/{where}: {kind} {name} has no row in the lock table")
    return errors


def check_shape(doc_lines):
    """Returns the errors of the document's length and width (characters, not bytes)."""
    errors = []
    if len(doc_lines) > MAX_LINES:
        errors.append(f"{len(doc_lines)} lines, more than {MAX_LINES}: shorten it")
    header = None
    for num, line in enumerate(doc_lines, 1):
        if not line.startswith("|"):
            header = None
            if len(line) > MAX_WIDTH:
                errors.append(f"line {num}: {len(line)} characters, more than {MAX_WIDTH}")
            continue
        row = cells(line)
        if header is None:
            header = row
        free = {MODULE_HEADER.index("layers, bottom to top")} if header == MODULE_HEADER else set()
        for i, cell in enumerate(row):
            if i not in free and len(cell) > MAX_WIDTH:
                errors.append(f"line {num}: cell {i + 1} has {len(cell)} characters, more than "
                              f"{MAX_WIDTH}")
    return errors


def run(doc, src, obj=None, out=sys.stdout):
    """Checks both tables; returns the exit status."""
    with open(doc) as f:
        lines = f.read().splitlines()
    bad = 0
    for what, check in (("module table", lambda: check_modules(lines, src, obj)),
                        ("lock table", lambda: check_locks(lines, src)),
                        ("length and width", lambda: check_shape(lines)),
                        ("hidden externs", lambda: unhidden_externs(src))):
        try:
            errors = check()
        except ValueError as e:
            errors = [str(e)]
        for e in errors:
            print(f"check-architecture: {doc}: {e}", file=out)
        print(f"{what}: " + (f"FAILED ({len(errors)} error(s))" if errors else "ok"), file=out)
        bad |= bool(errors)
    return int(bad)


# The planted tree: modules a (with layers) and b (without), a calls b, and three locks.
PLANT_SOURCES = {
    "a/low.c": "#include <pthread.h>\nstatic pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;\n"
               "int b_fn(void);\nint low(void) { return b_fn(); }\n",
    "a/high.c": "int low(void);\nint high(void) { return low(); }\n",
    "a/types.h": "#include <pthread.h>\ntypedef struct {\n    pthread_mutex_t lock;\n    int n;\n"
                 "} state;\n/*\npthread_mutex_t not_a_lock; a comment */\n"
                 "extern pthread_mutex_t g_extern;\nextern int dls_count DLS_HIDDEN;\n"
                 "extern char **environ;\n",
    "b/b.c": "typedef struct { int held; } dls_spin;\nstatic dls_spin g_spin = {0};\n"
             "int b_fn(void) { return g_spin.held; }\n",
}
PLANT_DOC = """# planted

| module | layers, bottom to top | role | calls |
|---|---|---|---|
| `shim/a` | low < high | the planted module | b |
| `shim/b` | — | the other one | nothing |

| # | lock | file | guards | taken while holding |
|---|---|---|---|---|
| 1 | `g_state.lock` | `a/types.h` | the state | — |
| 2 | `g_lock` | `a/low.c` | low things | 1 |
| 3 | `g_spin` (`dls_spin`) | `b/b.c` | b's things | — |
"""


def plant(root, doc, compile_objects=False, extra=None):
    """Builds the planted tree under root with the document text doc, and the sources extra
    {file under shim/: text} besides the usual ones; returns (doc, src, obj)."""
    src, obj = os.path.join(root, "shim"), os.path.join(root, "obj")
    for rel, text in {**PLANT_SOURCES, **(extra or {})}.items():
        path = os.path.join(src, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        if compile_objects and rel.endswith(".c"):
            o = os.path.join(obj, rel[:-2] + ".o")
            os.makedirs(os.path.dirname(o), exist_ok=True)
            subprocess.run([os.environ.get("CC", "cc"), "-c", path, "-o", o], check=True)
    with open(os.path.join(src, "a", "layers.txt"), "w") as f:
        f.write("# planted\n0 low.c\n1 high.c\n")
    path = os.path.join(root, "architecture.md")
    with open(path, "w") as f:
        f.write(doc)
    return path, src, obj


def self_test(tree=None):
    """Plants a clean tree and wrong tables and expects the verdicts; prints cmocka-style counts
    (run-tests.sh counts them). With tree = (doc, src, obj) it also checks that real tree."""
    def edit(old, new):
        assert old in PLANT_DOC, old
        return PLANT_DOC.replace(old, new)
    cases = [
        ("matching tables pass", PLANT_DOC, True, 0, None),
        ("a missing module row fails", edit("| `shim/b` | — | the other one | nothing |\n", ""),
         False, 1, "shim/b: no row in the module table"),
        ("a row for no module fails", edit("| `shim/b` |", "| `shim/c` |"), False, 1,
         "shim/c: no such directory"),
        ("layers other than layers.txt fail", edit("low < high", "low, high"), False, 1,
         "the layers are not a/layers.txt's; it reads: low < high"),
        ("layers for a module without layers.txt fail",
         edit("| `shim/b` | — |", "| `shim/b` | b |"), False, 1, "shim/b has no layers.txt"),
        ("modules calling both ways fail",
         edit("| the other one | nothing |", "| the other one | a |"), False, 1,
         "the modules do not call one way"),
        ("a call missing from the table fails", edit("| the planted module | b |",
                                                      "| the planted module | nothing |"),
         True, 1, "shim/a also calls b"),
        ("a call the objects do not make fails", edit("| the planted module | b |",
                                                       "| the planted module | b, the loader |"),
         True, 1, "shim/a does not call the loader"),
        ("a lock row naming no lock fails", edit("| 2 | `g_lock` |", "| 2 | `g_mutex` |"), False, 1,
         "a/low.c declares no lock g_mutex"),
        ("a lock row in the wrong file fails", edit("| `a/low.c` |", "| `a/high.c` |"), False, 1,
         "a/high.c declares no lock g_lock"),
        ("a missing lock row fails",
         edit("| 3 | `g_spin` (`dls_spin`) | `b/b.c` | b's things | — |\n", ""), False, 1,
         "dls_spin g_spin has no row in the lock table"),
        ("a lock of another type fails", edit("`g_spin` (`dls_spin`)", "`g_spin`"), False, 1,
         "g_spin in b/b.c is a dls_spin, not a pthread_mutex_t"),
        ("an order naming a later row fails",
         edit("| low things | 1 |", "| low things | 3 |"), False, 1,
         "'taken while holding' names '3', not a row above"),
        ("rows out of order fail", edit("| 3 | `g_spin`", "| 4 | `g_spin`"), False, 1,
         "lock row numbered '4', wanted 3"),
        ("a document of 400 lines passes", PLANT_DOC + "\n" * (400 - PLANT_DOC.count("\n")),
         False, 0, None),
        ("a document over 400 lines fails", PLANT_DOC + "\n" * (401 - PLANT_DOC.count("\n")),
         False, 1, "401 lines, more than 400"),
        ("a line of 100 characters passes", PLANT_DOC + "x" * 100 + "\n", False, 0, None),
        ("a line over 100 characters fails", PLANT_DOC + "x" * 101 + "\n", False, 1,
         "line 13: 101 characters, more than 100"),
        ("a table cell over 100 characters fails", edit("| b's things |", f"| {'x' * 101} |"),
         False, 1, "line 12: cell 4 has 101 characters, more than 100"),
        ("a long layers cell passes",
         edit("| low < high |", "| low" + " " * 120 + "< high |"), False, 0, None),
    ]
    tally = selftest.Tally()
    for name, doc, objects, want_rc, want_text in cases:
        with tempfile.TemporaryDirectory() as root:
            path, src, obj = plant(root, doc, compile_objects=objects)
            rc, text = selftest.captured(run, path, src, obj if objects else None)
        tally.case(name, rc, text, want_rc, want_text)
    with tempfile.TemporaryDirectory() as root:
        path, src, obj = plant(root, PLANT_DOC, extra={"a/index.h": "int n;\n"
                                                       "extern int dls_table[4];\n"})
        rc, text = selftest.captured(run, path, src, None)
    tally.case("an extern dls_ name without DLS_HIDDEN fails", rc, text, 1,
               "index.h:2: extern dls_table without DLS_HIDDEN")
    if tree:
        rc, text = selftest.captured(run, *tree)
        print(text, end="")
        tally.verdict("docs/architecture.md's tables match the tree", rc == 0)
    return tally.done()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default="docs/architecture.md", help="the design document")
    ap.add_argument("--src", default="shim", help="the modules' source directories")
    ap.add_argument("--obj", help="the modules' object directories: check the calls column too")
    ap.add_argument("--self-test", action="store_true", help="plant wrong rows, expect failures")
    ap.add_argument("--self-test-tree", action="store_true",
                    help="with --self-test, also check the tree at --doc/--src/--obj")
    a = ap.parse_args()
    if a.self_test:
        return self_test((a.doc, a.src, a.obj) if a.self_test_tree else None)
    return run(a.doc, a.src, a.obj)


if __name__ == "__main__":
    sys.exit(main())
