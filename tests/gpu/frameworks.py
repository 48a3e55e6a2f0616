#!/usr/bin/env python3
"""Real frameworks exchanging on real streams: every ordered pair among PyTorch, CuPy and JAX,
every handover path, plain and under dlsync check and fix.

    frameworks.py --shim build/lib/libdlsync.so [--logs DIR] [--reps N] [--jobs N] [--budget S]
    frameworks.py --launcher SITE/bin/dlsync ...   the check and fix runs under `dlsync run`
    frameworks.py --shim ... --fake BUILD      dry run on the simulator build in BUILD
    frameworks.py --plan                       prints what would run, runs nothing

For each pair the producer fills a large tensor with 42 after a slow kernel on a non-default
stream of its own and hands it over at once; the consumer computes 2*x on its own stream and
checks for 84 everywhere. The handover paths:
  legacy   a capsule from the producer's legacy export (torch.utils.dlpack.to_dlpack,
           cupy.ndarray.toDlpack, jax.dlpack.to_dlpack, else __dlpack__() with no stream)
           imported by the consumer's legacy capsule import: no stream can travel
  nosync   the protocol, the producer asked for no synchronization (__dlpack__(stream=-1))
  wrong    the protocol with the wrong stream: the legacy default stream instead of the
           consumer's own (non-blocking) stream
  right    the protocol done right: the consumer's from_dlpack under its own stream, which the
           producer orders after its work (the twin: nothing for dlsync to do)
The producer exports under its own stream (torch.cuda.stream / with cupy stream), as a framework
that knows its stream would. Each (pair, path) runs in its own processes, one per mode (plain
without the shim; check and fix with the shim preloaded and CUDA_INJECTION64_PATH unset, or with
--launcher started as a user would, `dlsync run --mode M --verbose -- python3 ...`, with the
dlsync command of an installed wheel), each repeating the exchange --reps times. A row:
  pair  path  plain: stale k/N  check: races  fix: correct k/N  injected  outcome
Outcome: PASS, or FAIL naming what broke dlsync's promises: fix left a stale read; check was
silent on a path the plain run showed stale; the twin got a race report or an injected wait or
read stale. A path a framework does not offer is "n/a" with the reason. With --budget S the
whole step ends within S seconds: a run not started by then, or still running then, is not
judged, and its row says "SKIP (time budget ...)". A "time:" line gives the runs' durations (the
median per mode, the slowest run). The closing line is "N passed, N failed, N skipped" (skipped:
n/a rows, rows cut by the budget and missing frameworks); exit 0 when nothing failed. Without a
usable GPU (or with --plan) the plan is printed, every row is skipped, exit 0.

--fake BUILD replaces the three frameworks with the simulator build's fake MXNet (producer) and
fake TVM (consumer), C fixtures with streams of their own: it proves this script's plumbing, row
format and timeouts where there is no GPU. FRAMEWORKS_TIMEOUT bounds each child run in seconds
(default 90): a child past it is killed and its row says "timeout". FRAMEWORKS_BASE_PRELOAD is
preloaded into every child, ahead of the shim (a sanitizer runtime, for a sanitizer build).
The framework classes are shared with tests/gpu/handoff (the pytest twins) and train_step.py.
"""
import argparse
import concurrent.futures
import ctypes
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

SKIP, UNSUPPORTED = 77, 78
PATHS = ("legacy", "nosync", "wrong", "right")
REAL = ("torch", "cupy", "jax")
N_ELEMS = 1 << 24
VALUE, EXPECTED = 42.0, 84.0
LEGACY_STREAM = 1  # the DLPack protocol's number for CUDA's legacy default stream


class Unsupported(Exception):
    """The framework does not offer this handover."""


class Handover:
    """What the consumer's from_dlpack sees: the producer's tensor, exported under the producer's
    own stream, with the stream the path asks for."""

    def __init__(self, producer, x, path):
        self.producer, self.x, self.path = producer, x, path

    def __dlpack__(self, stream=None, **kw):
        if self.path == "nosync":
            stream = -1
        elif self.path == "wrong":
            stream = LEGACY_STREAM
        return self.producer.dlpack(self.x, stream, kw)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


# ---- the real frameworks ------------------------------------------------------------------------
# A producer offers produce() (a tensor filled with VALUE after a slow kernel on its own stream,
# returned at once), sync(x) (waits on the host for that work), legacy_export(x) and
# dlpack(x, stream, kw); a consumer offers legacy_import(capsule), protocol_import(obj), read(y)
# (2*y on its own stream, back on the host) and warm().

class Torch:
    name = "torch"

    def __init__(self, cycles):
        import torch
        if not torch.cuda.is_available():
            raise Unsupported("torch sees no CUDA device")
        self.t, self.cycles = torch, cycles
        self.prod, self.cons = torch.cuda.Stream(), torch.cuda.Stream()

    def produce(self):
        x = self.t.zeros(N_ELEMS, device="cuda")
        self.t.cuda.synchronize()
        with self.t.cuda.stream(self.prod):
            self.t.cuda._sleep(self.cycles)
            x.fill_(VALUE)
        return x

    def sync(self, x):
        self.prod.synchronize()

    def legacy_export(self, x):
        from torch.utils.dlpack import to_dlpack
        with self.t.cuda.stream(self.prod):
            return to_dlpack(x), "torch.utils.dlpack.to_dlpack"

    def dlpack(self, x, stream, kw):
        with self.t.cuda.stream(self.prod):
            return x.__dlpack__(stream=stream, **kw)

    def legacy_import(self, capsule):
        from torch.utils.dlpack import from_dlpack
        with self.t.cuda.stream(self.cons):
            return from_dlpack(capsule), "torch.utils.dlpack.from_dlpack"

    def protocol_import(self, obj):
        with self.t.cuda.stream(self.cons):
            return self.t.from_dlpack(obj)

    def read(self, y):
        with self.t.cuda.stream(self.cons):
            z = y * 2
        self.cons.synchronize()
        return z.cpu().numpy()

    def warm(self):
        self.read(self.t.zeros(N_ELEMS, device="cuda"))


SPIN = r'''extern "C" __global__ void spin(long long cycles)
{ long long t0 = clock64(); while (clock64() - t0 < cycles) { } }'''


class Cupy:
    name = "cupy"

    def __init__(self, cycles):
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise Unsupported("CuPy sees no CUDA device")
        self.c, self.cycles = cupy, cycles
        self.prod = cupy.cuda.Stream(non_blocking=True)
        self.cons = cupy.cuda.Stream(non_blocking=True)
        self.spin = cupy.RawKernel(SPIN, "spin")

    def produce(self):
        x = self.c.zeros(N_ELEMS, dtype=self.c.float32)
        self.c.cuda.Device().synchronize()
        with self.prod:
            self.spin((1,), (1,), (self.c.int64(self.cycles),))
            x.fill(VALUE)
        return x

    def sync(self, x):
        self.prod.synchronize()

    def legacy_export(self, x):
        if not hasattr(x, "toDlpack"):
            raise Unsupported(f"cupy {self.c.__version__} has no ndarray.toDlpack")
        with self.prod:
            return x.toDlpack(), "cupy.ndarray.toDlpack"

    def dlpack(self, x, stream, kw):
        with self.prod:
            return x.__dlpack__(stream=stream, **kw)

    def legacy_import(self, capsule):
        with self.cons:
            if hasattr(self.c, "fromDlpack"):
                return self.c.fromDlpack(capsule), "cupy.fromDlpack"
            try:
                return self.c.from_dlpack(capsule), "cupy.from_dlpack(capsule)"
            except (TypeError, AttributeError, ValueError) as e:
                raise Unsupported(f"cupy {self.c.__version__} imports no capsule ({e})")

    def protocol_import(self, obj):
        with self.cons:
            return self.c.from_dlpack(obj)

    def read(self, y):
        with self.cons:
            z = y * 2
        self.cons.synchronize()
        return self.c.asnumpy(z)

    def warm(self):
        self.read(self.c.zeros(N_ELEMS, dtype=self.c.float32))


class Jax:
    """JAX runs everything on its own compute stream (non-default); the producer's slow kernel is
    a chain of matrix products ahead of the fill, in one jitted function whose output reuses the
    donated zeros, so a read before the chain ends sees zeros."""
    name = "jax"

    def __init__(self, cycles):
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        import jax.numpy as jnp
        if not any(d.platform == "gpu" for d in jax.devices()):
            raise Unsupported("jax sees no GPU")
        self.j, self.jnp = jax, jnp
        iters = max(1, cycles // 5_000_000)
        hi = jax.lax.Precision.HIGHEST

        def slow(z, m):
            a = jax.lax.fori_loop(0, iters, lambda i, a: jnp.tanh(jnp.dot(a, m, precision=hi)), m)
            return z + VALUE + jnp.minimum(jnp.abs(a[0, 0]), 0.0)
        self.slow = jax.jit(slow, donate_argnums=0)
        self.m = jnp.full((4096, 4096), 1e-4, dtype=jnp.float32)
        self.produce().block_until_ready()  # compile outside the measured exchanges

    def produce(self):
        z = self.jnp.zeros(N_ELEMS, dtype=self.jnp.float32).block_until_ready()
        return self.slow(z, self.m)

    def sync(self, x):
        x.block_until_ready()

    def legacy_export(self, x):
        to = getattr(getattr(self.j, "dlpack", None), "to_dlpack", None)
        if to is not None:
            return to(x), "jax.dlpack.to_dlpack"
        return x.__dlpack__(), "jax.Array.__dlpack__() without a stream"

    def dlpack(self, x, stream, kw):
        return x.__dlpack__(stream=stream, **kw)

    def legacy_import(self, capsule):
        try:
            return self.j.dlpack.from_dlpack(capsule), "jax.dlpack.from_dlpack(capsule)"
        except (TypeError, AttributeError, ValueError) as e:
            raise Unsupported(f"jax {self.j.__version__} imports no capsule ({e})")

    def protocol_import(self, obj):
        return self.j.dlpack.from_dlpack(obj)

    def read(self, y):
        import numpy
        return numpy.asarray(y * 2)

    def warm(self):
        self.read(self.jnp.zeros(N_ELEMS, dtype=self.jnp.float32))


# ---- the simulator's fake frameworks (dry run) --------------------------------------------------

def _out_handle(fn, arg, name):
    """Calls a C entry point `int fn(arg, void **out)` and returns *out; raises when it fails."""
    out = ctypes.c_void_p()
    if fn(arg, ctypes.byref(out)) != 0:
        raise RuntimeError(f"{name} failed")
    return out.value


class _Fake:
    """The scenario corpus's fake frameworks on the CUDA simulator, loaded from a build folder."""
    libs = None

    @classmethod
    def load(cls, build):
        if cls.libs is None:
            g = ctypes.RTLD_GLOBAL
            rt = ctypes.CDLL(os.path.join(build, "cudasim", "libcudart.so.13"), g)
            be = ctypes.CDLL(os.path.join(build, "scenarios", "libscenbackend.so"), g)
            mx = ctypes.CDLL(os.path.join(build, "scenarios", "libfakemx.so"), g)
            tvm = ctypes.CDLL(os.path.join(build, "scenarios", "libfaketvm.so"), g)
            for f in (mx.mx_stream, tvm.tvm_stream, mx.mx_empty):
                f.restype = ctypes.c_void_p
            mx.mx_fill.argtypes = [ctypes.c_void_p, ctypes.c_float]
            tvm.tvm_result.restype = ctypes.c_float
            tvm.tvm_result.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
            for f in (tvm.tvm_read, tvm.tvm_free):
                f.argtypes = [ctypes.c_void_p]
            for f in (mx.MXNDArrayToDLPack, tvm.TVMArrayFromDLPack):
                f.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
            be.scen_hold.argtypes = [ctypes.c_void_p]
            rt.cudaEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            rt.cudaStreamWaitEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
            cls.libs = (rt, be, mx, tvm)
        return cls.libs


class FakeMx(_Fake):
    """Producer: the fake MXNet fills on its own non-blocking stream, held by the simulator until
    a host thread waits (so a read that does not wait sees the old zeros)."""
    name = "fakemx"

    def __init__(self, build, hang):
        self.rt, self.be, self.mx, _ = self.load(build)
        self.hang = hang
        self.mx.mx_init(0)
        self.n = 1024

    def produce(self):
        if self.hang:
            threading.Event().wait()
        a = self.mx.mx_empty(self.n, 2)
        self.mx.mx_fill(a, 0.0)
        self.mx.mx_sync()
        self.be.scen_hold(self.mx.mx_stream())
        self.mx.mx_fill(a, VALUE)
        return a

    def sync(self, a):
        self.mx.mx_sync()  # a host wait: the simulator lets the held write run

    def _export(self, a):
        return _out_handle(self.mx.MXNDArrayToDLPack, a, "MXNDArrayToDLPack")

    def legacy_export(self, a):
        return self._export(a), "MXNDArrayToDLPack"

    def dlpack(self, a, stream, kw):
        if stream not in (None, -1):
            ev = ctypes.c_void_p()
            self.rt.cudaEventCreate(ctypes.byref(ev))
            self.rt.cudaEventRecord(ev, self.mx.mx_stream())
            self.rt.cudaStreamWaitEvent(None if stream == LEGACY_STREAM else stream, ev, 0)
        return self._export(a)


class FakeTvm(_Fake):
    """Consumer: the fake TVM imports and reads on its own non-blocking stream."""
    name = "faketvm"

    def __init__(self, build):
        _, self.be, _, self.tvm = self.load(build)
        self.tvm.tvm_init(0)

    def consumer_stream(self):
        return self.tvm.tvm_stream()

    def _import(self, t):
        return _out_handle(self.tvm.TVMArrayFromDLPack, t, "TVMArrayFromDLPack")

    def legacy_import(self, t):
        return self._import(t), "TVMArrayFromDLPack"

    def protocol_import(self, obj):
        return self._import(obj.__dlpack__(stream=self.consumer_stream()))

    def read(self, h):
        self.tvm.tvm_read(h)
        self.be.scen_settle()  # the read runs now unless something orders it after the held write
        seen = [2 * self.tvm.tvm_result(h, 0, i) for i in (0, 511, 1023)]  # the consumer's 2*x
        self.tvm.tvm_free(h)
        return seen

    def warm(self):
        pass  # the simulator loads kernels eagerly


# ---- one child run -------------------------------------------------------------------------------

def make(name, args):
    if name == "fakemx":
        return FakeMx(args.fake, args.fake_hang)
    if name == "faketvm":
        return FakeTvm(args.fake)
    try:
        cls = {"torch": Torch, "cupy": Cupy, "jax": Jax}[name]
        return cls(args.cycles)
    except ImportError as e:
        raise Unsupported(f"{name} is not installed ({e})")


def child(args):
    """One (producer, consumer, path) in this process, --reps times: prints 'export: ...',
    'import: ...' and one 'rep: correct|stale' line each; exits UNSUPPORTED (78) with a 'n/a:'
    line when a framework or the path is missing."""
    import warnings
    warnings.simplefilter("ignore")
    try:
        prod, cons = make(args.producer, args), make(args.consumer, args)
        # The consumer's kernel runs once before the exchanges: CUDA loads kernels lazily, and the
        # first launch of one may synchronize the context, hiding the race in the first exchange.
        cons.warm()
        for _ in range(args.reps):
            x = prod.produce()
            try:
                if args.path == "legacy":
                    capsule, how_out = prod.legacy_export(x)
                    y, how_in = cons.legacy_import(capsule)
                else:
                    how_out = f"{prod.name} __dlpack__ ({args.path})"
                    y = cons.protocol_import(Handover(prod, x, args.path))
                    how_in = f"{cons.name} from_dlpack"
            except Unsupported:
                raise
            except Exception as e:  # the frameworks refuse this handover
                raise Unsupported(f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
            seen = cons.read(y)
            ok = all(float(v) == EXPECTED for v in seen)
            print(f"export: {how_out}\nimport: {how_in}\nrep: {'correct' if ok else 'stale'}", flush=True)
    except Unsupported as e:
        print(f"n/a: {e}", flush=True)
        return UNSUPPORTED
    return 0


# ---- the driver ----------------------------------------------------------------------------------

def child_env(mode, args, log=None):
    """The environment of a child run in mode: the shim preloaded (unless --launcher starts it),
    DLSYNC_MODE, a log, the simulator's CUPTI for --fake; CUDA_INJECTION64_PATH unset."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "DLSYNC_MODE", "DLSYNC_LOG")}
    env.update(PYTHONUNBUFFERED="1", XLA_PYTHON_CLIENT_PREALLOCATE="false")
    base = os.environ.get("FRAMEWORKS_BASE_PRELOAD", "")
    if base:
        env["LD_PRELOAD"] = base
    if mode != "plain":
        if not args.launcher:
            shim = os.path.abspath(args.shim)
            env.update(LD_PRELOAD=f"{base}:{shim}" if base else shim, DLSYNC_MODE=mode, DLSYNC_VERBOSE="1")
            if log:
                env["DLSYNC_LOG"] = log
        if args.fake:
            env["DLSYNC_CUPTI"] = os.path.join(args.fake, "cudasim", "libcupti.so.13")
    return env


def child_cmd(mode, args, cmd, log=None):
    """cmd as it runs in mode: as is (plain, or the shim preloaded), or under --launcher's
    `dlsync run`."""
    if mode == "plain" or not args.launcher:
        return cmd
    return [args.launcher, "run", "--mode", mode, "--verbose"] + (["--log", log] if log else []) + ["--"] + cmd


def run_timed(cmd, env, timeout):
    """Runs cmd in a process group of its own; returns (exit status, or None when it ran past
    timeout seconds and its whole group was killed, a launcher's children included; stdout;
    stderr; seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        rc = None
    return rc, out, err, time.monotonic() - t0


def run_child(case, mode, args):
    """Runs one child for case = (producer, consumer, path) in mode; returns a dict of its
    outcome: status ('ok' | 'n/a' | 'timeout' | 'exit N' | 'budget': not started, or cut, by
    --budget), stale, correct, races, injected, note, seconds."""
    prod, cons, path = case
    tag = f"{prod}-{cons}.{path}.{mode}"
    log = os.path.join(args.logs, tag + ".jsonl") if args.logs and mode != "plain" else None
    left = args.deadline - time.monotonic()
    if left < 1:
        return dict(status="budget", stale=0, correct=0, races=None, injected=None, exchanges=None, ops=None,
                    note="not started", seconds=0.0)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--producer", prod, "--consumer", cons,
           "--path", path, "--reps", str(args.reps), "--cycles", str(args.cycles)]
    if args.fake:
        cmd += ["--fake", args.fake] + (["--fake-hang"] if args.fake_hang else [])
    limit = min(args.timeout, left)
    rc, out, err, seconds = run_timed(child_cmd(mode, args, cmd, log), child_env(mode, args, log), limit)
    if args.logs:
        with open(os.path.join(args.logs, tag + ".out"), "w") as f:
            f.write(out + "\n---- stderr ----\n" + err)
    summary = ([l for l in err.splitlines() if l.startswith("dlsync: mode=")] or [""])[-1]

    def count(key):
        m = re.search(rf" {key}=(\d+)", summary)
        return int(m.group(1)) if m else None
    reps = re.findall(r"^rep: (\w+)$", out, re.M)
    how = [m.group(1) for m in re.finditer(r"^(?:export|import): (.*)$", out, re.M)][:2]
    na = re.search(r"^n/a: (.*)$", out, re.M)
    status = ("budget" if rc is None and limit < args.timeout else "timeout" if rc is None
              else "n/a" if rc == UNSUPPORTED else "ok" if rc == 0 else f"exit {rc}")
    note = na.group(1) if na else "cut" if status == "budget" else " -> ".join(how)
    if status.startswith("exit"):
        tail = [l for l in err.strip().splitlines() if not l.startswith("dlsync:")][-1:]
        note = (note + "; " if note else "") + (tail[0][:160] if tail else "")
    return dict(status=status, stale=reps.count("stale"), correct=reps.count("correct"),
                races=count("races"), injected=count("injected"), exchanges=count("exchanges"), ops=count("ops"),
                note=note, seconds=seconds)


def judge(path, r, reps):
    """PASS, or FAIL with the broken promises, for one (pair, path) from its three runs."""
    plain, check, fix = r["plain"], r["check"], r["fix"]
    why = [f"{m}: {r[m]['status']}" + (f" ({r[m]['note']})" if r[m]["status"] == "n/a" else "")
           for m in ("plain", "check", "fix") if r[m]["status"] != "ok"]
    if why:
        return "FAIL (" + "; ".join(why) + ")"
    if fix["correct"] != reps:
        why.append(f"fix read stale {fix['stale']} of {reps}")
    if path == "right":
        if plain["stale"]:
            why.append("the twin read stale without dlsync")
        if check["races"]:
            why.append("race reported on the twin")
        if fix["injected"]:
            why.append("wait injected on the twin")
    elif plain["stale"] and not check["races"]:
        why.append("check silent on a stale read")
    return "PASS" if not why else "FAIL (" + "; ".join(why) + ")"


def prepare_driver(ap, args):
    """A driver's checks before it runs children (this one's and train_step.py's): --shim or
    --launcher given, the launcher's path made absolute, the --logs folder made."""
    if not args.shim and not args.launcher:
        ap.error("--shim or --launcher is required")
    if args.launcher:
        args.launcher = os.path.abspath(args.launcher)
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)


def timing(done, total):
    """The "time:" line: the step's wall time, each mode's median run and the slowest run."""
    ran = {k: r["seconds"] for k, r in done.items() if r["status"] != "budget" or r["seconds"]}
    if not ran:
        return f"time: {total:.0f} s, no run started"
    per_mode = ", ".join(f"{m} {statistics.median(v for (c, mm), v in ran.items() if mm == m):.1f} s"
                         for m in ("plain", "check", "fix") if any(mm == m for (c, mm) in ran))
    (p, c, path), mode = max(ran, key=ran.get)
    return (f"time: {total:.0f} s for {len(ran)} runs; median run: {per_mode}; slowest: {p}->{c} {path} "
            f"{mode} {ran[((p, c, path), mode)]:.1f} s")


def cases(args):
    fws = ("fakemx", "faketvm") if args.fake else REAL
    pairs = [(p, c) for p in fws for c in fws if p != c]
    if args.fake:
        pairs = [("fakemx", "faketvm")]
    return [(p, c, path) for p, c in pairs for path in PATHS]


def gpu_usable():
    """Says whether a CUDA device answers (through the driver API, never in this process's
    frameworks): (True, '') or (False, reason)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return False, f"no CUDA driver ({e})"
    n = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value < 1:
        return False, "the CUDA driver reports no usable device"
    return True, ""


HEADER = f"{'pair':<12} {'path':<7} {'plain stale':>11} {'check races':>11} {'fix correct':>11} {'injected':>8}  outcome"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shim")
    ap.add_argument("--launcher", help="a dlsync command: check and fix run under `dlsync run`")
    ap.add_argument("--budget", type=float, help="seconds for the whole step")
    ap.add_argument("--logs")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--cycles", type=int, default=200_000_000, help="producer's slow kernel, GPU clock cycles")
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("FRAMEWORKS_TIMEOUT", "90")))
    ap.add_argument("--fake", help="simulator build folder: dry run with the fake frameworks")
    ap.add_argument("--fake-hang", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--plan", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--producer")
    ap.add_argument("--consumer")
    ap.add_argument("--path", choices=PATHS)
    args = ap.parse_args()
    if args.fake:
        args.fake = os.path.abspath(args.fake)
    if args.child:
        return child(args)
    todo = cases(args)
    usable, why = (True, "") if args.fake else gpu_usable()
    if args.plan or not usable:
        print(f"frameworks: {'plan only' if args.plan else why}; would run {len(todo)} cases x "
              f"(plain, check, fix), {args.reps} exchanges each:")
        for p, c, path in todo:
            print(f"skip  {p}->{c} {path}")
        print(f"0 passed, 0 failed, {len(todo)} skipped")
        return 0
    prepare_driver(ap, args)
    start = time.monotonic()
    # The last seconds of the budget print the rows.
    args.deadline = start + args.budget - 2 if args.budget is not None else float("inf")
    runs = [(case, mode) for case in todo for mode in ("plain", "check", "fix")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = dict(zip(runs, pool.map(lambda cm: run_child(cm[0], cm[1], args), runs)))
    print(f"frameworks: shim {'started by ' + args.launcher + ' run' if args.launcher else 'preloaded: ' + args.shim}")
    print(HEADER)
    passed = failed = skipped = 0
    notes = []
    for case in todo:
        p, c, path = case
        r = {m: done[(case, m)] for m in ("plain", "check", "fix")}
        pair = f"{p}->{c}"
        if r["plain"]["status"] == "n/a":
            print(f"{pair:<12} {path:<7} {'-':>11} {'-':>11} {'-':>11} {'-':>8}  n/a ({r['plain']['note']})")
            skipped += 1
            continue
        cut = [m for m in ("plain", "check", "fix") if r[m]["status"] == "budget"]
        if cut:
            print(f"{pair:<12} {path:<7} {'-':>11} {'-':>11} {'-':>11} {'-':>8}  SKIP (time budget of "
                  f"{args.budget:g} s: {', '.join(m + ' ' + r[m]['note'] for m in cut)})")
            skipped += 1
            continue
        outcome = judge(path, r, args.reps)
        plain, check, fix = r["plain"], r["check"], r["fix"]
        n = args.reps
        cells = (f"{plain['stale']}/{n}", "?" if check["races"] is None else str(check["races"]),
                 f"{fix['correct']}/{n}", "?" if fix["injected"] is None else str(fix["injected"]))
        print(f"{pair:<12} {path:<7} {cells[0]:>11} {cells[1]:>11} {cells[2]:>11} {cells[3]:>8}  {outcome}")
        seen = {k: "?" if check[k] is None else check[k] for k in ("exchanges", "ops")}
        notes.append(f"{pair} {path}: {plain['note'] or '-'}; check saw {seen['exchanges']} exchange(s), "
                     f"{seen['ops']} CUDA op(s)")
        passed, failed = passed + (outcome == "PASS"), failed + (outcome != "PASS")
    for n in notes:
        print(f"note: {n}")
    print(timing(done, time.monotonic() - start))
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
