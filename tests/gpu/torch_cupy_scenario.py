#!/usr/bin/env python3
"""Real-framework scenario: PyTorch produces a tensor on a side stream, CuPy consumes it on its
own non-blocking stream, and the handover performs no stream handshake.

    torch_cupy_scenario.py --shim build/lib/libdlsync.so [--logs DIR] [--cycles N]

The producer spins the GPU for N clock cycles (torch.cuda._sleep; a matmul chain where that is
missing) on a torch side stream and then fills the tensor with 42. The handover is the first of
these the installed versions accept (found at run time, printed in the notes):
  torch.utils.dlpack.to_dlpack + cupy.fromDlpack          (legacy capsule functions)
  torch.utils.dlpack.to_dlpack + cupy.from_dlpack(capsule)
  cupy.from_dlpack on a wrapper whose __dlpack__ calls torch's __dlpack__(stream=-1)
CuPy then computes 2*y on its own non-blocking stream; the expected value is 84 everywhere.
  racy     nothing orders CuPy's stream after torch's side stream
  correct  the side stream is synchronized before the handover
Each variant runs plain, under dlsync check and under dlsync fix (the shim preloaded, with
CUDA_INJECTION64_PATH unset), one row each in run-scenarios.sh's format, with the same
expectations. Then a closing "N passed, N failed[, N skipped]" line. Without torch, CuPy or a GPU
every row is skipped and the exit status is 0; otherwise it is 0 only when every row passed.
Each child run is bounded by TORCH_CUPY_TIMEOUT seconds (default 180).
"""
import argparse
import os
import re
import subprocess
import sys

SKIP = 77
EXPECTED = 84.0


def child(variant, cycles):
    """One run in this process: prints 'path: ...' and 'verdict: correct|stale', or exits SKIP."""
    try:
        import torch
        import cupy
    except ImportError as e:
        print(f"skip: {e}")
        sys.exit(SKIP)
    if not torch.cuda.is_available():
        print("skip: torch sees no CUDA device")
        sys.exit(SKIP)
    import warnings
    warnings.simplefilter("ignore")

    n = 1 << 20
    x = torch.zeros(n, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(cycles)
        else:
            m = torch.ones(4096, 4096, device="cuda")
            for _ in range(40):
                m = (m @ m) / 4096.0
        x.fill_(42.0)
    if variant == "correct":
        side.synchronize()

    consumer = cupy.cuda.Stream(non_blocking=True)
    with consumer:
        path, y = handover(torch, cupy, x)
        z = y * 2
        consumer.synchronize()
    seen = cupy.asnumpy(z)
    print(f"path: {path}")
    print(f"result: {seen[0]} ... {seen[-1]}")
    print("verdict: " + ("correct" if bool((seen == EXPECTED).all()) else "stale"))
    sys.stdout.flush()


def handover(torch, cupy, x):
    """Hands x to CuPy without a stream handshake; returns (description, cupy array)."""
    from torch.utils.dlpack import to_dlpack
    if hasattr(cupy, "fromDlpack"):
        return "to_dlpack + cupy.fromDlpack", cupy.fromDlpack(to_dlpack(x))
    try:
        return "to_dlpack + cupy.from_dlpack(capsule)", cupy.from_dlpack(to_dlpack(x))
    except (TypeError, AttributeError):
        pass

    class NoHandshake:
        def __dlpack__(self, stream=None, **kw):
            return x.__dlpack__(stream=-1, **kw)

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    return "cupy.from_dlpack(obj), obj.__dlpack__ -> torch __dlpack__(stream=-1)", cupy.from_dlpack(NoHandshake())


def run(variant, mode, args):
    """Runs one child; returns (status, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "DLSYNC_MODE", "DLSYNC_LOG")}
    env["PYTHONUNBUFFERED"] = "1"
    if mode != "plain":
        env.update(LD_PRELOAD=os.path.abspath(args.shim), DLSYNC_MODE=mode, DLSYNC_VERBOSE="1")
        if args.logs:
            env["DLSYNC_LOG"] = os.path.join(args.logs, f"torch_cupy.{variant}.{mode}.jsonl")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", variant, "--cycles", str(args.cycles)]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=float(os.environ.get("TORCH_CUPY_TIMEOUT", "180")))
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or "", e.stderr or ""


def counter(summary, name):
    m = re.search(rf" {name}=(\d+)", summary)
    return m.group(1) if m else "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim")
    ap.add_argument("--logs")
    ap.add_argument("--cycles", type=int, default=200_000_000)
    ap.add_argument("--child", choices=("racy", "correct"))
    args = ap.parse_args()
    if args.child:
        child(args.child, args.cycles)
        return 0
    if not args.shim:
        ap.error("--shim is required")
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)

    rows, notes, passed, failed = [], [], 0, 0
    for variant in ("racy", "correct"):
        for mode in ("plain", "check", "fix"):
            rc, out, err = run(variant, mode, args)
            if args.logs:
                with open(os.path.join(args.logs, f"torch_cupy.{variant}.{mode}.err"), "w") as f:
                    f.write(err if isinstance(err, str) else err.decode(errors="replace"))
            if rc == SKIP:
                reason = out.strip().splitlines()[-1] if out.strip() else "skipped"
                print(f"torch_cupy: {reason}; all 6 rows skipped")
                print("0 passed, 0 failed, 6 skipped")
                return 0
            m = re.search(r"^verdict: (\w+)", out or "", re.M)
            verdict = "timeout" if rc is None else m.group(1) if rc == 0 and m else f"exit {rc}"
            summary = ([l for l in (err or "").splitlines() if l.startswith("dlsync: mode=")] or [""])[-1]
            races = injected = "-"
            if mode != "plain":
                races, injected = counter(summary, "races"), counter(summary, "injected")
                notes.append(f"{variant}/{mode}: exchanges={counter(summary, 'exchanges')} "
                             f"ops={counter(summary, 'ops')} races={races} injected={injected} "
                             f"fallbacks={counter(summary, 'fallbacks')}")
            p = re.search(r"^path: (.*)$", out or "", re.M)
            if p and not any(n.startswith("handover:") for n in notes):
                notes.insert(0, f"handover: {p.group(1)}")
            want = "stale" if variant == "racy" and mode != "fix" else "correct"
            why = [] if verdict == want else [f"expected {want}"]
            if mode == "check" and variant == "racy" and not (races.isdigit() and int(races) >= 1):
                why.append("expected races >= 1")
            if mode == "check" and variant == "correct" and races != "0":
                why.append("expected no race")
            if mode == "fix" and variant == "racy" and not (injected.isdigit() and int(injected) >= 1):
                why.append("expected an injected wait")
            if mode == "fix" and variant == "correct" and injected != "0":
                why.append("expected no injection")
            outcome = "PASS" if not why else "FAIL (" + "; ".join(why) + ")"
            passed, failed = passed + (not why), failed + bool(why)
            rows.append(f"{'torch_cupy':<16} {variant:<8} {mode:<6} {verdict:<8} {races:>6} {injected:>9}  {outcome}")
    print(f"{'scenario':<16} {'variant':<8} {'mode':<6} {'verdict':<8} {'races':>6} {'injected':>9}  outcome")
    print("\n".join(rows))
    for n in notes:
        print(f"note: {n}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
