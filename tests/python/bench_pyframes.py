"""Figures for bench_pyframes (make bench): prints the median ns of one operation over 5 runs.

    python3 bench_pyframes.py calls N                    a ctypes.CDLL call of libc's abs()
    python3 bench_pyframes.py exchanges N LIBDIR cdll|pydll   a legacy export + import + release of
        a pinned host tensor (fake MXNet -> fake TVM, no kernel) through ctypes
"""
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def median(f, n):
    runs = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        f(n)
        runs.append((time.perf_counter_ns() - t0) / n)
    return sorted(runs)[2]


def calls(n):
    absolute = ctypes.CDLL(None).abs
    absolute.argtypes = [ctypes.c_int]
    for i in range(n):
        absolute(-1)


def exchanges(libdir, loader):
    from scen_ctypes import Scenario
    s = Scenario(libdir, loader)
    mx, tvm = s.mx, s.tvm
    tensor, array = ctypes.c_void_p(), ctypes.c_void_p()

    def run(n):
        for _ in range(n):
            a = mx.mx_empty(4, 3)  # kDLCUDAHost
            mx.MXNDArrayToDLPack(a, ctypes.byref(tensor))
            tvm.TVMArrayFromDLPack(tensor, ctypes.byref(array))
            mx.mx_free(a)
            tvm.tvm_free(array)
    return run


if __name__ == "__main__":
    what, n = sys.argv[1], int(sys.argv[2])
    if what == "calls":
        calls(1000)
        print("%.1f" % median(calls, n))
    else:
        run = exchanges(sys.argv[3], {"cdll": ctypes.CDLL, "pydll": ctypes.PyDLL}[sys.argv[4]])
        run(100)
        print("%.1f" % median(run, n))
