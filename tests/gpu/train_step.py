#!/usr/bin/env python3
"""A training step that hands one tensor to CuPy (or JAX) and back through DLPack each step,
plain and under dlsync fix and check: what dlsync costs where users judge it, and whether the
race users have changes the training.

    train_step.py --shim build/lib/libdlsync.so [--launcher DLSYNC] [--steps N] [--blocks N]
    train_step.py --shim ... --fake BUILD     dry run on the simulator build in BUILD
    train_step.py --plan                      prints the rows, runs nothing

The model, on a torch stream of its own: x -> Linear(D, H) -> SiLU computed by the peer ->
Linear(H, D) -> MSE loss, backward (torch's), an SGD step. The hidden activation goes to the
peer and the peer's result comes back through DLPack; the peer computes on a non-blocking stream
of its own. How the hand-off is ordered (the variants):
  racy     nothing orders the two streams: legacy capsules both ways with CuPy
           (torch.utils.dlpack.to_dlpack, cupy.fromDlpack; ndarray.toDlpack, from_dlpack), with
           JAX the protocol told not to synchronize on the way out (__dlpack__(stream=-1))
  devsync  the same with a device synchronize at each hand-off (the common workaround)
  events   synchronized by hand: with CuPy an event after torch's write that the peer's stream
           waits on, and one after the peer's kernel that torch's stream waits on; with JAX the
           protocol done right both ways
Three processes: plain (racy, devsync, events), fix (racy, events) and check (racy, events), with
the shim preloaded (--shim) or started by `dlsync run` (--launcher). In each the variants take
turns, block by block (one warm-up block each, then --blocks timed blocks of --steps steps, each
block ending with a device synchronize), each variant with its own model made from the same seed
and data (deterministic algorithms), so their parameters compare bit for bit. Rows:
  variant  mode  steps/s (median of the blocks)  vs racy plain  params  hazards  injected  outcome
params: "same" when the variant's final parameters equal those of devsync plain (the reference),
else "differ" (stale data changed the training). hazards, injected: what dlsync counted while
that variant's blocks ran (the count of every race report's hazard, dlsync.races(); injected
waits, dlsync.state()), "-" plain. Outcome: PASS, or FAIL when a fix or events run's parameters
differ from the reference, check saw no hazard in a racy run whose plain twin differed, check saw
one in an events run, fix injected a wait into an events run, or a process failed. The ratio lines
follow, then "N passed, N failed, N skipped"; exit 0 when nothing failed. Without torch and CuPy
(or JAX) with CUDA, or with --plan, every row is skipped (exit 0).

--fake BUILD: the simulator build's fake MXNet writes (held until a host thread waits) and the
fake TVM reads, in the same variants (devsync: a host synchronize; events: an event record and a
stream wait), so the driver's rows, ratios and judgement are proven where there is no GPU
(--fake-missing: as if the peer framework were not installed).
TRAIN_TIMEOUT (seconds, default 120) bounds each process; --budget S bounds the whole run.
"""
import argparse
import hashlib
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import frameworks  # noqa: E402  (the shared child plumbing and the fake frameworks)

VARIANTS = {"plain": ("racy", "devsync", "events"), "fix": ("racy", "events"), "check": ("racy", "events")}
REFERENCE = ("devsync", "plain")
D, H, BATCH = 1024, 4096, 2048


# ---- the peers: one hand-off each way ------------------------------------------------------------

class CupyPeer:
    name = "cupy"

    def __init__(self, torch):
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise frameworks.Unsupported("CuPy sees no CUDA device")
        self.t, self.c = torch, cupy
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.ext = torch.cuda.ExternalStream(self.stream.ptr)  # torch's handle on the peer's stream
        self.silu = cupy.ElementwiseKernel("float32 x", "float32 y", "y = x / (1.0f + expf(-x))", "dls_silu")
        self.from_capsule = getattr(cupy, "fromDlpack", None) or cupy.from_dlpack

    def hand_off(self, h, variant, torch_stream):
        from torch.utils.dlpack import from_dlpack, to_dlpack
        t = self.t
        if variant == "devsync":
            t.cuda.synchronize()
        elif variant == "events":
            self.ext.wait_event(torch_stream.record_event())
        with self.stream:
            z = self.silu(self.from_capsule(to_dlpack(h)))
        if variant == "devsync":
            self.c.cuda.Device().synchronize()
        elif variant == "events":
            torch_stream.wait_event(self.ext.record_event())
        return from_dlpack(z.toDlpack())


class JaxPeer:
    name = "jax"

    def __init__(self, torch):
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        if not any(d.platform == "gpu" for d in jax.devices()):
            raise frameworks.Unsupported("jax sees no GPU")
        self.t, self.j = torch, jax
        self.silu = jax.jit(jax.nn.silu)

    def hand_off(self, h, variant, torch_stream):
        if variant == "devsync":
            self.t.cuda.synchronize()
        path = "right" if variant == "events" else "nosync"
        z = self.silu(self.j.dlpack.from_dlpack(Protocol(h, path)))
        if variant == "devsync":
            z.block_until_ready()
        return self.t.from_dlpack(z)


class Protocol:
    """h handed over through the protocol: with the consumer's stream (right) or told not to
    synchronize (nosync)."""

    def __init__(self, h, path):
        self.h, self.path = h, path

    def __dlpack__(self, stream=None, **kw):
        return self.h.__dlpack__(stream=-1 if self.path == "nosync" else stream, **kw)

    def __dlpack_device__(self):
        return self.h.__dlpack_device__()


# ---- the models ----------------------------------------------------------------------------------

class TorchModel:
    """The MLP with the peer's SiLU in the middle, for one variant."""

    def __init__(self, torch, peer, variant, stream):
        self.t, self.peer, self.variant, self.stream = torch, peer, variant, stream
        g = torch.Generator(device="cpu").manual_seed(0)
        with torch.cuda.stream(stream):
            self.x = torch.randn(BATCH, D, generator=g).cuda()
            self.y = torch.randn(BATCH, D, generator=g).cuda()
            self.l1 = torch.nn.Linear(D, H)
            self.l2 = torch.nn.Linear(H, D)
            with torch.no_grad():
                for p in self.params():
                    p.copy_(torch.randn(p.shape, generator=g) * 0.02)
            self.l1.cuda()
            self.l2.cuda()
        self.opt = torch.optim.SGD(self.params(), lr=1e-3)
        model = self

        class Silu(torch.autograd.Function):
            @staticmethod
            def forward(ctx, h):
                ctx.save_for_backward(h)
                return model.peer.hand_off(h.detach().contiguous(), model.variant, model.stream)

            @staticmethod
            def backward(ctx, g_out):
                (h,) = ctx.saved_tensors
                s = torch.sigmoid(h)
                return g_out * s * (1 + h * (1 - s))
        self.silu = Silu.apply

    def params(self):
        return list(self.l1.parameters()) + list(self.l2.parameters())

    def step(self):
        t = self.t
        with t.cuda.stream(self.stream):
            loss = t.nn.functional.mse_loss(self.l2(self.silu(self.l1(self.x))), self.y)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()

    def settle(self):
        self.t.cuda.synchronize()

    def digest(self):
        h = hashlib.sha1()
        for p in self.params():
            h.update(p.detach().cpu().numpy().tobytes())
        return h.hexdigest()[:16]


class FakeModel:
    """The dry run's step on the simulator: the fake MXNet writes the step's value (held until a
    host thread waits), exports it; the fake TVM imports and reads it on its own stream."""

    def __init__(self, libs, variant):
        self.rt, self.be, self.mx, self.tvm = libs
        self.variant = variant
        self.a = self.mx.mx_empty(256, 2)
        self.seen = hashlib.sha1()
        self.n = 0
        self.event = frameworks.ctypes.c_void_p()
        self.rt.cudaEventCreate(frameworks.ctypes.byref(self.event))

    def step(self):
        self.n += 1
        self.mx.mx_fill(self.a, 0.0)
        self.mx.mx_sync()
        self.be.scen_hold(self.mx.mx_stream())
        self.mx.mx_fill(self.a, float(self.n))
        if self.variant == "devsync":
            self.mx.mx_sync()
        elif self.variant == "events":
            self.rt.cudaEventRecord(self.event, self.mx.mx_stream())
            self.rt.cudaStreamWaitEvent(self.tvm.tvm_stream(), self.event, 0)
        t = frameworks._out_handle(self.mx.MXNDArrayToDLPack, self.a, "MXNDArrayToDLPack")
        y = frameworks._out_handle(self.tvm.TVMArrayFromDLPack, t, "TVMArrayFromDLPack")
        self.tvm.tvm_read(y)
        self.be.scen_settle()
        self.seen.update(repr([self.tvm.tvm_result(y, 0, i) for i in (0, 255)]).encode())
        self.tvm.tvm_free(y)

    def settle(self):
        self.mx.mx_sync()

    def digest(self):
        return self.seen.hexdigest()[:16]


def make_models(args, variants):
    """One model per variant, and the peer's name."""
    if args.fake_missing:
        raise frameworks.Unsupported("the peer framework is missing (--fake-missing)")
    if args.fake:
        libs = frameworks._Fake.load(args.fake)
        libs[2].mx_init(0)
        libs[3].tvm_init(0)
        return {v: FakeModel(libs, v) for v in variants}, "faketvm"
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        import torch
    except ImportError as e:
        raise frameworks.Unsupported(f"torch is not installed ({e})")
    if not torch.cuda.is_available():
        raise frameworks.Unsupported("torch sees no CUDA device")
    torch.use_deterministic_algorithms(True)
    peer, why = None, []
    for cls in ((CupyPeer, JaxPeer) if args.peer == "auto" else (CupyPeer,) if args.peer == "cupy" else (JaxPeer,)):
        try:
            peer = cls(torch)
            break
        except (ImportError, frameworks.Unsupported) as e:
            why.append(f"{cls.name}: {e}")
    if peer is None:
        raise frameworks.Unsupported("no peer framework: " + "; ".join(why))
    stream = torch.cuda.Stream()
    return {v: TorchModel(torch, peer, v, stream) for v in variants}, peer.name


# ---- one process -----------------------------------------------------------------------------------

def hazards(dlsync):
    """Every race report's hazard count so far (0 without the shim)."""
    return sum(r.count for r in dlsync.races()) if dlsync and dlsync.active() else 0


def injected(dlsync):
    s = dlsync.state() if dlsync else None
    return s.injected if s else 0


def child(args):
    """The variants of one mode, block by block: prints 'peer: NAME', one 'block:' line per timed
    block and one 'result:' line per variant; exits 78 with an 'n/a:' line when a framework is
    missing."""
    import warnings
    warnings.simplefilter("ignore")
    sys.path.append(os.path.join(ROOT, "python"))  # after an installed wheel's
    try:
        import dlsync
    except ImportError:
        dlsync = None
    variants = VARIANTS[args.mode]
    try:
        models, peer = make_models(args, variants)
    except frameworks.Unsupported as e:
        print(f"n/a: {e}", flush=True)
        return frameworks.UNSUPPORTED
    print(f"peer: {peer}", flush=True)
    for block in range(args.blocks + 1):
        for v in variants:
            m = models[v]
            h0, i0, t0 = hazards(dlsync), injected(dlsync), time.perf_counter()
            for _ in range(args.steps):
                m.step()
            m.settle()
            dt = time.perf_counter() - t0
            if block:  # the first block of each variant warms it up
                print(f"block: variant={v} steps={args.steps} seconds={dt:.6f} hazards={hazards(dlsync) - h0} "
                      f"injected={injected(dlsync) - i0}", flush=True)
    for v in variants:
        print(f"result: variant={v} params={models[v].digest()}", flush=True)
    return 0


# ---- the driver ------------------------------------------------------------------------------------

def run_mode(mode, args):
    """Runs the child of one mode; returns {'status', 'peer', 'note', variant: {rate, params,
    hazards, injected}} (status 'budget' when --budget left no time to start it or cut it)."""
    log = os.path.join(args.logs, f"train.{mode}.jsonl") if args.logs and mode != "plain" else None
    left = args.deadline - time.monotonic()
    rc, out, err, limit = "not started", "", "", 0
    if left >= 5:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--mode", mode, "--steps", str(args.steps),
               "--blocks", str(args.blocks), "--peer", args.peer] + (["--fake", args.fake] if args.fake else []) + \
              (["--fake-missing"] if args.fake_missing else [])
        limit = min(args.timeout, left)
        rc, out, err, _ = frameworks.run_timed(frameworks.child_cmd(mode, args, cmd, log),
                                               frameworks.child_env(mode, args, log), limit)
        if args.logs:
            with open(os.path.join(args.logs, f"train.{mode}.out"), "w") as f:
                f.write(out + "\n---- stderr ----\n" + err)
    na = re.search(r"^n/a: (.*)$", out, re.M)
    status = ("budget" if rc == "not started" or (rc is None and limit < args.timeout) else "timeout" if rc is None
              else "n/a" if rc == frameworks.UNSUPPORTED else "ok" if rc == 0 else f"exit {rc}")
    tail = [l for l in err.strip().splitlines() if not l.startswith("dlsync")][-1:]
    note = na.group(1) if na else "not started" if rc == "not started" else tail[0][:160] if tail and rc else ""
    r = dict(status=status, note=note, peer=(re.findall(r"^peer: (\S+)$", out, re.M) or ["?"])[0])
    for v in VARIANTS[mode]:
        blocks = [dict(kv.split("=") for kv in m.group(1).split())
                  for m in re.finditer(rf"^block: variant={v} (.*)$", out, re.M)]
        params = re.findall(rf"^result: variant={v} params=(\S+)$", out, re.M)
        rates = [int(b["steps"]) / float(b["seconds"]) for b in blocks if float(b["seconds"]) > 0]
        r[v] = dict(rate=statistics.median(rates) if rates else None, params=params[0] if params else None,
                    hazards=sum(int(b["hazards"]) for b in blocks), injected=sum(int(b["injected"]) for b in blocks))
    return r


def judge(variant, mode, runs):
    """PASS, or FAIL with the broken promises, for one (variant, mode); '-' for plain rows."""
    r = runs[mode][variant]
    ref = runs[REFERENCE[1]][REFERENCE[0]]["params"]
    if mode == "plain" and variant != "events":
        return "-"
    why = []
    if variant == "events" or mode == "fix":
        if r["params"] != ref:
            why.append("parameters differ from the synchronized run's")
    if mode == "check" and variant == "racy" and not r["hazards"] and runs["plain"]["racy"]["params"] != ref:
        why.append("check saw no hazard where the plain run's training changed")
    if mode == "check" and variant == "events" and r["hazards"]:
        why.append("hazard reported on the synchronized program")
    if mode == "fix" and variant == "events" and r["injected"]:
        why.append("wait injected into the synchronized program")
    return "PASS" if not why else "FAIL (" + "; ".join(why) + ")"


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "n/a"


def plan_rows():
    return [(v, m) for m in VARIANTS for v in VARIANTS[m]]


HEADER = f"{'variant':<8} {'mode':<6} {'steps/s':>9} {'vs racy plain':>13} {'params':>7} {'hazards':>7} {'injected':>8}  outcome"


def report(runs, args):
    """Prints the rows and the ratio lines; returns (passed, failed)."""
    peer = next((r["peer"] for r in runs.values() if r["peer"] != "?"), "?")
    what = "fakemx -> faketvm (simulator)" if args.fake else f"torch -> {peer} -> torch, D={D} H={H} batch={BATCH}"
    print(f"train_step: {what}; {args.blocks} timed blocks of {args.steps} steps per variant")
    print(HEADER)
    base = runs["plain"]["racy"]["rate"]
    ref = runs[REFERENCE[1]][REFERENCE[0]]["params"]
    passed = failed = 0
    for v, m in plan_rows():
        r = runs[m][v]
        rate = f"{r['rate']:.1f}" if r["rate"] else "-"
        params = "-" if not r["params"] else "ref" if (v, m) == REFERENCE else "same" if r["params"] == ref else "differ"
        cells = ("-" if m != "check" else str(r["hazards"]), "-" if m != "fix" else str(r["injected"]))
        outcome = judge(v, m, runs)
        print(f"{v:<8} {m:<6} {rate:>9} {ratio(r['rate'], base):>13} {params:>7} {cells[0]:>7} {cells[1]:>8}  {outcome}")
        passed, failed = passed + (outcome == "PASS"), failed + outcome.startswith("FAIL")
    rate = {(v, m): runs[m][v]["rate"] for v, m in plan_rows()}
    print(f"ratio: fix / plain {ratio(rate['racy', 'fix'], rate['racy', 'plain'])}, "
          f"check / plain {ratio(rate['racy', 'check'], rate['racy', 'plain'])} (steps per second, the racy program)")
    print(f"ratio: fix / device-sync {ratio(rate['racy', 'fix'], rate['devsync', 'plain'])}, "
          f"fix / hand-synced {ratio(rate['racy', 'fix'], rate['events', 'plain'])}, "
          f"fix / racy {ratio(rate['racy', 'fix'], rate['racy', 'plain'])}; "
          f"the racy run's parameters {'equal' if runs['plain']['racy']['params'] == ref else 'differ from'} "
          f"the synchronized run's")
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shim")
    ap.add_argument("--launcher", help="a dlsync command: fix and check run under `dlsync run`")
    ap.add_argument("--logs")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--peer", choices=("auto", "cupy", "jax"), default="auto")
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("TRAIN_TIMEOUT", "120")))
    ap.add_argument("--budget", type=float, help="seconds for the whole run")
    ap.add_argument("--fake", help="simulator build folder: dry run with the fake frameworks")
    ap.add_argument("--fake-missing", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--plan", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", choices=tuple(VARIANTS), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fake:
        args.fake = os.path.abspath(args.fake)
    if args.child:
        return child(args)
    usable, why = (True, "") if args.fake else frameworks.gpu_usable()
    if args.plan or not usable:
        print(f"train_step: {'plan only' if args.plan else why}; would run:")
        for v, m in plan_rows():
            print(f"skip  train {v} {m}")
        print(f"0 passed, 0 failed, {len(plan_rows())} skipped")
        return 0
    frameworks.prepare_driver(ap, args)
    args.deadline = time.monotonic() + args.budget if args.budget is not None else float("inf")
    runs = {}
    for mode in VARIANTS:  # one at a time: the figures are times
        runs[mode] = run_mode(mode, args)
        if runs[mode]["status"] == "n/a":
            print(f"train_step: skipped ({runs[mode]['note']})")
            for v, m in plan_rows():
                print(f"skip  train {v} {m}")
            print(f"0 passed, 0 failed, {len(plan_rows())} skipped")
            return 0
    broken = {m: r for m, r in runs.items() if r["status"] != "ok"}
    passed, failed = report(runs, args)
    for m, r in broken.items():
        print(f"FAIL  train {m}: {r['status']}" + (f" ({r['note']})" if r["note"] else ""))
    failed += len(broken)
    print(f"{passed} passed, {failed} failed, 0 skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
