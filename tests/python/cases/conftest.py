"""The pytest cases of `make test-frameworks`: the scenario library directory comes from
DLSYNC_TEST_SCENARIOS (build/scenarios), the helper from tests/python."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
