"""Prints, as one JSON object, what the in-tree `dlsync` module says before and after one
exchange of tests/python/scen_ctypes.py: whether libcuda was loaded by `import dlsync`, the
state, the races, exchanges and injected orderings, and what dlsync.no_races() did.

    python3 query.py SCENARIO_LIB_DIR cdll|pydll racy|synced
"""
import ctypes
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def libcuda_loaded():
    with open("/proc/self/maps") as f:
        return "libcuda.so" in f.read()


import dlsync  # noqa: E402

out = {"import_loads_cuda": libcuda_loaded(), "active": dlsync.active(), "mode": dlsync.mode()}
from scen_ctypes import Scenario  # noqa: E402

libdir, kind, which = sys.argv[1:4]
scenario = Scenario(libdir, {"cdll": ctypes.CDLL, "pydll": ctypes.PyDLL}[kind])
try:
    with dlsync.no_races():
        out["value"] = scenario.exchange(which == "synced")
    out["no_races"] = "passed"
except dlsync.RaceError as e:
    out["no_races"] = "raised %d" % len(e.races)
s = dlsync.state()
out["state"] = vars(s) if s else None
out["races"] = [vars(r) for r in dlsync.races()]
out["exchanges"] = [vars(x) for x in dlsync.exchanges()]
out["injections"] = [vars(i) for i in dlsync.injections()]
print(json.dumps(out))
