"""The side-stream exchange of tests/scenarios driven from Python through ctypes.

The fake MXNet (libfakemx.so) writes 42 on its stream while the simulator holds that stream
(scen_hold), exports the tensor with its legacy MXNDArrayToDLPack, the fake TVM (libfaketvm.so)
imports it with TVMArrayFromDLPack and reads it on its own stream. Nothing orders the read after
the write unless `synced` (an event recorded on the producer's stream and waited for on the
consumer's, as a correct program does), so the read sees the old value 0 unless dlsync's fix mode
orders it. The libraries are loaded with ctypes.CDLL (calls release the GIL) or ctypes.PyDLL
(calls keep it).

    python3 scen_ctypes.py SCENARIO_LIB_DIR cdll|pydll racy|synced   prints "value V"
"""
import ctypes
import os
import sys

KDL_CUDA = 2


class Scenario:
    """The two fake frameworks and the simulator's controls, loaded with `loader`."""

    def __init__(self, libdir, loader=ctypes.CDLL):
        self.be = loader(os.path.join(libdir, "libscenbackend.so"))
        self.mx = loader(os.path.join(libdir, "libfakemx.so"))
        self.tvm = loader(os.path.join(libdir, "libfaketvm.so"))
        self.rt = loader("libcudart.so.13")  # the simulator's, already loaded by the frameworks
        vp = ctypes.c_void_p
        self.mx.mx_stream.restype = vp
        self.mx.mx_empty.restype = vp
        self.mx.mx_empty.argtypes = [ctypes.c_int, ctypes.c_int]
        self.mx.mx_fill.argtypes = [vp, ctypes.c_float]
        self.mx.mx_free.argtypes = [vp]
        self.mx.MXNDArrayToDLPack.argtypes = [vp, ctypes.POINTER(vp)]
        self.tvm.tvm_stream.restype = vp
        self.tvm.TVMArrayFromDLPack.argtypes = [vp, ctypes.POINTER(vp)]
        self.tvm.tvm_read.argtypes = [vp]
        self.tvm.tvm_result.restype = ctypes.c_float
        self.tvm.tvm_result.argtypes = [vp, ctypes.c_int, ctypes.c_int]
        self.tvm.tvm_free.argtypes = [vp]
        self.be.scen_hold.argtypes = [vp]
        self.be.scen_release.argtypes = [vp]
        self.rt.cudaEventCreateWithFlags.argtypes = [ctypes.POINTER(vp), ctypes.c_uint]
        self.rt.cudaEventRecord.argtypes = [vp, vp]
        self.rt.cudaStreamWaitEvent.argtypes = [vp, vp, ctypes.c_uint]
        self.rt.cudaEventDestroy.argtypes = [vp]
        self.mx.mx_init(0)  # non-blocking streams
        self.tvm.tvm_init(0)

    def order(self, producer, consumer):
        """Makes stream `consumer` wait for the work enqueued on `producer` so far."""
        event = ctypes.c_void_p()
        self.rt.cudaEventCreateWithFlags(ctypes.byref(event), 2)  # cudaEventDisableTiming
        self.rt.cudaEventRecord(event, producer)
        self.rt.cudaStreamWaitEvent(consumer, event, 0)
        self.rt.cudaEventDestroy(event)

    def exchange(self, synced):
        """One exchange of 4 floats; returns the first value the consumer read."""
        mx, tvm = self.mx, self.tvm
        a = mx.mx_empty(4, KDL_CUDA)
        mx.mx_fill(a, 0.0)
        mx.mx_sync()
        self.be.scen_hold(mx.mx_stream())
        mx.mx_fill(a, 42.0)
        tensor = ctypes.c_void_p()
        if mx.MXNDArrayToDLPack(a, ctypes.byref(tensor)):  # the producer's export
            raise RuntimeError("MXNDArrayToDLPack failed")
        array = ctypes.c_void_p()
        if tvm.TVMArrayFromDLPack(tensor, ctypes.byref(array)):
            raise RuntimeError("TVMArrayFromDLPack failed")
        mx.mx_free(a)
        if synced:
            self.order(mx.mx_stream(), tvm.tvm_stream())
        tvm.tvm_read(array)  # the consumer's read
        self.be.scen_settle()
        self.be.scen_release(mx.mx_stream())
        value = tvm.tvm_result(array, 0, 0)
        tvm.tvm_free(array)
        return value


def main():
    libdir, kind, which = sys.argv[1:4]
    loader = {"cdll": ctypes.CDLL, "pydll": ctypes.PyDLL}[kind]
    print("value", Scenario(libdir, loader).exchange(which == "synced"))


if __name__ == "__main__":
    main()
