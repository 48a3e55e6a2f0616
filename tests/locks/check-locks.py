#!/usr/bin/env python3
"""The lock contracts are checked (tests/locks): compiles planted C snippets against the shim's
headers with clang -Wthread-safety -Werror, as the clang build compiles the shim, and expects a
driver call under the policy lock, and a function that needs the lock called without it, to fail
with clang's warning, and the same calls in order to pass. Prints cmocka-style counts.

  tests/locks/check-locks.py SHIM_DIR CUDA_INCLUDE_DIR [CLANG]
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import selftest  # noqa: E402

HEAD = ('#include "policy/lock.h"\n#include "policy/order.h"\n#include "policy/stream_table.h"\n'
        '#include "cuda/drv.h"\n')
CASES = [
    ("a driver call after the unlock passes",
     "void planted(void) { dls_pol_lock(); dls_pol_unlock(); dls_drv_ctx_leave(0); }\n", None),
    ("a driver call under the policy lock fails",
     "void planted(void) { dls_pol_lock(); dls_drv_ctx_leave(0); dls_pol_unlock(); }\n",
     "cannot call function 'dls_drv_ctx_leave' while"),
    ("a function that needs the lock passes under it",
     "void planted(dls_pol_plan *p) { dls_pol_lock(); dls_pol_plan_carry_out(p); dls_pol_unlock(); }\n",
     None),
    ("a function that needs the lock fails without it",
     "void planted(dls_pol_plan *p) { dls_pol_plan_carry_out(p); }\n",
     "requires holding mutex 'dls_pol_g.lock'"),
    ("a stream-table lookup passes under the lock",
     "void planted(void) { dls_pol_lock(); (void)dls_pol_stream_find(1); dls_pol_unlock(); }\n", None),
    ("a stream-table lookup fails without the lock",
     "void planted(void) { (void)dls_pol_stream_find(1); }\n",
     "calling function 'dls_pol_stream_find' requires holding mutex 'dls_pol_g.lock'"),
]


def main():
    shim, cuda_inc = sys.argv[1], sys.argv[2]
    clang = sys.argv[3] if len(sys.argv) > 3 else "clang"
    tally = selftest.Tally()
    with tempfile.TemporaryDirectory() as root:
        for name, body, want in CASES:
            c = os.path.join(root, "planted.c")
            with open(c, "w") as f:
                f.write(HEAD + body)
            r = subprocess.run([clang, "-std=gnu11", "-D_GNU_SOURCE", "-Wthread-safety", "-Werror",
                                "-fsyntax-only", "-I", shim, "-I", os.path.join(shim, "include"),
                                "-I", cuda_inc, c], capture_output=True, text=True)
            ok = r.returncode == 0 if want is None else (r.returncode != 0 and want in r.stderr)
            tally.verdict(name, ok, f"exit {r.returncode}; clang said:\n{r.stderr}")
    return tally.done()


if __name__ == "__main__":
    sys.exit(main())
