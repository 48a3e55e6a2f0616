"""Exchanges between one framework and numpy, then torch, through DLPack; prints what each side
computed. Run plainly and under dlsync (trace, fix): the output must be the same.

Usage: exchange.py FRAMEWORK   (jax, tensorflow, paddle, tvm-ffi, paddle-tvm-ffi)

Last, numpy hands a read-only 3x4 array to numpy (the DLPack 1.x READ_ONLY flag). Debian's torch
(1.13) has no versioned DLPack, so it cannot export read-only.

Each partner P in (numpy, torch) makes a 3x4 float32 tensor, hands it to FRAMEWORK (P exports,
FRAMEWORK imports), FRAMEWORK doubles it and hands the result back (FRAMEWORK exports, P
imports). torch is Debian's python3-torch, appended to sys.path after the environment's own
packages; it is skipped (one line says so) when it cannot be imported.

paddle-tvm-ffi exchanges through paddle's DLPack C exchange API instead (with_exchange_api)."""
import sys

FW = sys.argv[1]


class Capsule:
    """Gives a bare capsule the __dlpack__ protocol (CPU), for consumers that only take objects."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kwargs):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


def fw_import(obj):
    """FRAMEWORK takes obj (an object with __dlpack__) and returns its doubled tensor."""
    if FW == "jax":
        import jax.numpy as jnp
        return jnp.from_dlpack(obj) * 2
    if FW == "tensorflow":
        import tensorflow as tf
        return tf.experimental.dlpack.from_dlpack(obj.__dlpack__()) * 2
    if FW == "paddle":
        import paddle
        return paddle.utils.dlpack.from_dlpack(obj.__dlpack__()) * 2
    if FW == "tvm-ffi":
        import numpy as np
        import tvm_ffi
        t = tvm_ffi.from_dlpack(obj)
        # tvm-ffi has no arithmetic: double through a copy, then hand a new tvm-ffi tensor out.
        return tvm_ffi.from_dlpack(np.from_dlpack(t) * 2)
    raise SystemExit("unknown framework " + FW)


def fw_export(x):
    """An object with __dlpack__ for FRAMEWORK's tensor x."""
    if FW == "tensorflow":
        import tensorflow as tf
        return Capsule(tf.experimental.dlpack.to_dlpack(x))
    if FW == "paddle":
        import paddle
        return Capsule(paddle.utils.dlpack.to_dlpack(x))
    return x


def aligned_arange():
    """np.arange(12) as float32 3x4 at a 64-byte aligned address: TensorFlow refuses (aborts on)
    unaligned DLPack data, and where malloc puts a small array differs from run to run."""
    import numpy as np
    raw = np.zeros(12 + 16, dtype=np.float32)
    skip = (-raw.ctypes.data % 64) // 4
    a = raw[skip:skip + 12].reshape(3, 4)
    a[...] = np.arange(12, dtype=np.float32).reshape(3, 4)
    return a


def with_numpy():
    import numpy as np
    a = aligned_arange()
    b = np.from_dlpack(fw_export(fw_import(a)))
    print(FW, "numpy", b.tolist())


def with_torch():
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import torch
        import torch.utils.dlpack
    except ImportError as e:
        print(FW, "torch skipped:", e)
        return
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    back = torch.utils.dlpack.from_dlpack(fw_export(fw_import(t)).__dlpack__())
    print(FW, "torch", back.tolist())


def with_read_only():
    """A read-only numpy array through the DLPack 1.x protocol: numpy exports it with the
    READ_ONLY flag (a versioned capsule) and its import is read-only too."""
    import numpy as np
    a = aligned_arange()
    a.flags.writeable = False
    b = np.from_dlpack(a)
    print(FW, "read-only", b.flags.writeable, b.tolist())


def with_exchange_api():
    """paddle and tvm-ffi through paddle's DLPack C exchange API: tvm-ffi reads the
    paddle.Tensor.__dlpack_c_exchange_api__ capsule and calls the table's functions (export of a
    paddle tensor, import of a tvm-ffi tensor as a paddle one). tvm-ffi does not call the table's
    non-owning export or current_work_stream (it asks for the stream of GPU tensors only): they
    are called from here through ctypes, as a C consumer calls them."""
    import ctypes
    import numpy as np
    import paddle
    import tvm_ffi

    x = paddle.to_tensor(aligned_arange())
    t = tvm_ffi.from_dlpack(x)  # paddle exports through the table, tvm-ffi imports
    print(FW, "from_dlpack", list(t.shape), np.from_dlpack(t).tolist())
    # The argument goes paddle -> tvm-ffi -> paddle (the callback receives a paddle tensor), the
    # callback's result paddle -> tvm-ffi, the function's result tvm-ffi -> paddle.
    double = tvm_ffi.convert_func(lambda a: a * 2, tensor_cls=type(x))
    y = double(x)
    print(FW, "convert_func", type(y).__module__, y.numpy().tolist())

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("dtype", ctypes.c_uint32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

    # dlpack.h's DLPackExchangeAPI: header {version {major, minor}, prev_api}, then five functions
    # (PYFUNCTYPE: they are called with the GIL held, as the header asks).
    dltensor_fn = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
    stream_fn = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    api = get(type(x).__dlpack_c_exchange_api__, b"dlpack_exchange_api")
    major, minor = (ctypes.c_uint32 * 2).from_address(api)
    fields = (ctypes.c_void_p * 7).from_address(api)
    print(FW, "table version", major, minor)
    dl = DLTensor()
    rc = dltensor_fn(fields[5])(x, ctypes.byref(dl))
    values = np.ctypeslib.as_array(ctypes.cast(dl.data + dl.byte_offset, ctypes.POINTER(ctypes.c_float)), (12,))
    print(FW, "dltensor_from_py_object_no_sync", rc, dl.ndim, [dl.shape[i] for i in range(dl.ndim)],
          values.tolist())
    stream = ctypes.c_void_p()
    rc = stream_fn(fields[6])(1, 0, ctypes.byref(stream))  # kDLCPU: no stream
    print(FW, "current_work_stream", rc, stream.value)


import numpy  # noqa: E402  (the environment's numpy, before Debian's torch is reachable)

if FW == "paddle-tvm-ffi":
    with_exchange_api()
else:
    fw_import(aligned_arange())  # load the framework before the exchanges
    with_numpy()
    with_torch()
    with_read_only()
