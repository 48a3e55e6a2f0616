"""The pytest twins of the GPU check's wheel step, for `pytest --dlsync=check`: a racy torch ->
CuPy hand-off (dlsync's report must fail it) and its synced twin (it must pass).

The producer (torch) fills a tensor after a slow kernel on its own stream and hands it over at
once through a legacy capsule (torch.utils.dlpack.to_dlpack); the consumer (CuPy) imports the
capsule and reads it on its own non-blocking stream. test_racy does just that and checks no
value: under check it fails by dlsync's race report alone. It then waits for the producer's
stream, so that its race ends with it: left pending, the producer's write would race with the
next test's first write of the freed memory (torch's caching allocator hands the block out again
on the legacy stream), a true race that check reports in that test. test_synced waits for the
producer's stream before the hand-off and checks every value.

HANDOFF_FAKE=BUILD runs the two on the simulator build in BUILD, the fake MXNet producing and the
fake TVM consuming (the dry run, tests/gpu/test_frameworks_dryrun.c). Without torch and CuPy with
CUDA both tests are skipped. The framework classes are tests/gpu/frameworks.py's.
"""
import argparse
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import frameworks  # noqa: E402


@pytest.fixture(scope="module")
def pair():
    fake = os.environ.get("HANDOFF_FAKE")
    args = argparse.Namespace(fake=os.path.abspath(fake) if fake else None, fake_hang=False,
                              cycles=200_000_000)
    try:
        prod, cons = (frameworks.make(n, args) for n in (("fakemx", "faketvm") if fake else ("torch", "cupy")))
    except frameworks.Unsupported as e:
        pytest.skip(str(e))
    cons.warm()
    return prod, cons


def hand_over(prod, cons, x):
    """x through the producer's legacy export and the consumer's legacy import; the consumer's
    2*x, on the host."""
    capsule, _ = prod.legacy_export(x)
    y, _ = cons.legacy_import(capsule)
    return cons.read(y)


def test_racy(pair):
    prod, cons = pair
    x = prod.produce()
    hand_over(prod, cons, x)
    prod.sync(x)


def test_synced(pair):
    prod, cons = pair
    x = prod.produce()
    prod.sync(x)
    assert all(float(v) == frameworks.EXPECTED for v in hand_over(prod, cons, x))
