"""Checks a dlsync log of exchange.py FRAMEWORK: every export and import logged with the right
framework and shape (the 3x4 tensors of exchange.py in each direction; the frameworks' own
internal exchanges may add others), no unknown or duplicate exchange. For paddle-tvm-ffi, every
exchange of paddle's goes through its DLPack C exchange API, and each wrapped field of the table
was seen. Otherwise numpy's read-only 3x4 export must be logged, and imported, with the
DLPack 1.x READ_ONLY flag. Prints the exchanges; exit status 1 with the reasons when something is wrong.

Usage: check_log.py LOG FRAMEWORK TORCH(0|1)"""
import json
import sys

log, fw, torch = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
recs = [json.loads(line) for line in open(log) if line.strip()]
ex = [r for r in recs if r.get("ev") in ("export", "import")]
names = {"tvm-ffi": "tvm-ffi", "jax": "jax", "tensorflow": "tensorflow", "paddle": "paddle"}
api = fw == "paddle-tvm-ffi"
known = {"numpy", "pytorch", "paddle", "tvm-ffi"} if api else {"numpy", "pytorch", names[fw]}
problems = []
by_xid = {}
for r in ex:
    by_xid.setdefault(r["xid"], []).append(r)
    if r["framework"] not in known:
        problems.append("unexpected framework %r in %s of xid %d (%s)" % (r["framework"], r["ev"], r["xid"], r["lib"]))
for xid, rs in sorted(by_xid.items()):
    evs = [r["ev"] for r in rs]
    if evs.count("export") != 1 or evs.count("import") > 1:
        problems.append("xid %d: %s" % (xid, " ".join("%s/%s" % (r["ev"], r["framework"]) for r in rs)))
    if len({str(r.get("shape")) for r in rs}) != 1:
        problems.append("xid %d: shapes differ: %s" % (xid, " ".join(str(r.get("shape")) for r in rs)))
pairs = set()
for xid, rs in by_xid.items():
    e = [r["framework"] for r in rs if r["ev"] == "export"]
    i = [r["framework"] for r in rs if r["ev"] == "import"]
    if e and i and rs[0].get("shape") == [3, 4] and rs[0].get("dtype") == "float32":
        pairs.add((e[0], i[0]))
if api:
    want = {("paddle", "tvm-ffi"), ("tvm-ffi", "paddle")}
    field = "DLPackExchangeAPI."
    for r in ex:
        if r["framework"] == "paddle" and not r["symbol"].startswith(field):
            problems.append("paddle's %s of xid %d seen at %s, not through the exchange API" %
                            (r["ev"], r["xid"], r["symbol"]))
    seen = {r["symbol"][len(field):] for r in ex if r["symbol"].startswith(field) and r.get("shape") == [3, 4]}
    for name in ("managed_tensor_from_py_object_no_sync", "managed_tensor_to_py_object_no_sync",
                 "dltensor_from_py_object_no_sync"):
        if name not in seen:
            problems.append("no exchange through %s%s logged" % (field, name))
    streams = [r for r in recs if r.get("ev") == "work_stream"]
    if [(r["framework"], r["symbol"], r["device"]["type"]) for r in streams] != \
            [("paddle", field + "current_work_stream", "cpu")]:
        problems.append("work_stream records: %s" % streams)
else:
    want = {("numpy", names[fw]), (names[fw], "numpy")}
    read_only = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
    ro = [xid for xid, rs in by_xid.items()
          if sorted((r["ev"], r["framework"], r.get("flags", 0) & read_only) for r in rs) ==
          [("export", "numpy", read_only), ("import", "numpy", read_only)] and rs[0].get("shape") == [3, 4]]
    if not ro:
        problems.append("no read-only numpy exchange (export and import with the READ_ONLY flag) logged")
    if torch:
        want |= {("pytorch", names[fw]), (names[fw], "pytorch")}
for p in sorted(want - pairs):
    problems.append("no exchange %s -> %s logged" % p)
print("  exchanges: " + ", ".join("%s->%s" % p for p in sorted(pairs)))
for p in problems:
    print("  PROBLEM: " + p)
sys.exit(1 if problems else 0)
