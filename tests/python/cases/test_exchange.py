"""A legacy producer and consumer called from Python (tests/python/scen_ctypes.py), racy and
synced, through ctypes.CDLL (the GIL is released in each call) and ctypes.PyDLL (kept). Run by
scripts/test-frameworks.sh under `pytest --dlsync=check|fix`, plain and with pytest-xdist."""
import ctypes
import os

import pytest

from scen_ctypes import Scenario

LIBDIR = os.environ["DLSYNC_TEST_SCENARIOS"]


@pytest.fixture(params=["cdll", "pydll"])
def scenario(request):
    return Scenario(LIBDIR, {"cdll": ctypes.CDLL, "pydll": ctypes.PyDLL}[request.param])


def test_racy(scenario):
    assert scenario.exchange(synced=False) == 42


def test_synced(scenario):
    assert scenario.exchange(synced=True) == 42


@pytest.mark.dlsync_race
def test_racy_expected(scenario):
    scenario.exchange(synced=False)


@pytest.mark.dlsync_race
def test_synced_expected(scenario):
    scenario.exchange(synced=True)


def test_racy_value_unchecked(scenario):
    """Passes on its own; under --dlsync=check the race dlsync reports fails it."""
    scenario.exchange(synced=False)
