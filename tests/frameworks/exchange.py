"""Exchanges between one framework and numpy, then torch, through DLPack; prints what each side
computed. Run plainly and under dlsync (trace, fix): the output must be the same.

Usage: exchange.py FRAMEWORK   (jax, tensorflow, paddle, tvm-ffi)

Each partner P in (numpy, torch) makes a 3x4 float32 tensor, hands it to FRAMEWORK (P exports,
FRAMEWORK imports), FRAMEWORK doubles it and hands the result back (FRAMEWORK exports, P
imports). torch is Debian's python3-torch, appended to sys.path after the environment's own
packages; it is skipped (one line says so) when it cannot be imported."""
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


import numpy  # noqa: E402  (the environment's numpy, before Debian's torch is reachable)

fw_import(aligned_arange())  # load the framework before the exchanges
with_numpy()
with_torch()
