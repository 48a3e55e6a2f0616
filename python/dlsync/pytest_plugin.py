"""The dlsync pytest plugin (registered through the `pytest11` entry point; inactive unless
asked).

    pytest --dlsync              # the same as --dlsync=check
    pytest --dlsync=check|fix|trace

When pytest is not already running under the shim, the plugin starts it again under
`dlsync run --mode MODE` before any conftest or test module is imported, with the same command
line (DLSYNC_PYTEST_RELAUNCHED guards against doing it twice). In check mode a race reported
while a test runs fails that test, with dlsync's report in the failure. A test that expects a
race says so with ``@pytest.mark.dlsync_race``: it fails when no race is reported (check mode;
the marker is ignored in fix and trace, which report no races). The terminal summary gets one
line: mode, races, exchanges, injected waits and the tests dlsync failed. pytest-xdist workers
inherit the shim and send their counts to the controller.
"""
import os
import re
import sys

import pytest

import dlsync

MODES = ("check", "fix", "trace")
GUARD = "DLSYNC_PYTEST_RELAUNCHED"
KEY = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("dlsync", "dlsync: DLPack stream-exchange races")
    group.addoption("--dlsync", action="store", nargs="?", const="check", default=None, metavar="MODE",
                    help="run the tests under dlsync in MODE (check, the default: a race fails its test; "
                         "fix; trace)")


def _requested(args):
    """The mode --dlsync asks for in args (normalized in place: a bare --dlsync followed by a
    path or test id becomes --dlsync=check), or None."""
    mode = None
    for i, a in enumerate(args):
        if a == "--dlsync":
            if i + 1 < len(args) and args[i + 1] in MODES:
                mode = args[i + 1]
            else:
                args[i] = "--dlsync=check"
                mode = "check"
        elif a.startswith("--dlsync="):
            mode = a.split("=", 1)[1]
    if mode is not None and mode not in MODES:
        raise pytest.UsageError("--dlsync=%s: expected one of %s" % (mode, ", ".join(MODES)))
    return mode


def _relaunch(mode, config):
    exe = dlsync.binary_path()
    if not exe:
        raise pytest.UsageError("--dlsync: this dlsync package has no dlsync command (install the wheel)")
    argv = getattr(sys, "orig_argv", None)
    entry = os.path.basename(sys.argv[0]) if sys.argv else ""
    if not argv or entry not in ("pytest", "py.test", "__main__.py", "pytest.exe"):
        raise pytest.UsageError("--dlsync: pytest runs inside another program here; start it under "
                                "`dlsync run --mode %s -- ...` instead" % mode)
    os.environ[GUARD] = "1"
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:  # pytest already captures fds 1 and 2: give them back first
        capture.stop_global_capturing()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["dlsync", "run", "--mode", mode, "--", sys.executable] + list(argv[1:]))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    mode = _requested(args)
    if mode is None or dlsync.active():
        return
    if os.environ.get(GUARD):
        raise pytest.UsageError("--dlsync: pytest was started again under `dlsync run`, but the dlsync shim "
                                "is not loaded (is LD_PRELOAD removed by something?)")
    _relaunch(mode, early_config)


_RUNNER = re.compile(r"^    at .* \(.*[/\\](_pytest|pluggy|xdist|execnet)[/\\].*:\d+\)$")


def _shown(text):
    """A report as a failure shows it: the frames of pytest's own machinery below the test are
    left out (the test's frames and the native ones stay)."""
    return "\n".join(line for line in text.split("\n") if not _RUNNER.match(line))


class _Plugin:
    def __init__(self, config, mode):
        self.config = config
        self.asked = mode
        self.failed = 0
        self.workers = []

    def _start(self, item):
        item.stash[KEY] = dlsync._snapshot()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        self._start(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        if call.when != "call" or rep.skipped:
            return
        s = dlsync.state()
        if not s or s.mode != "check":
            return
        found = dlsync.races_since(item.stash.get(KEY, []))
        marker = item.get_closest_marker("dlsync_race")
        if marker is not None:
            if not found:
                rep.outcome = "failed"
                rep.longrepr = "dlsync: the test expects a race (@pytest.mark.dlsync_race), and none was reported"
                rep.user_properties.append(("dlsync", "failed"))
            return
        if not found:
            return
        text = "\n".join(_shown(r.text) if r.count == 1 else
                         "(seen again, %d times so far; its first report:)\n%s" % (r.count, _shown(r.text))
                         for r in found)
        if rep.passed:
            rep.outcome = "failed"
            rep.longrepr = "dlsync reported %d race%s while the test ran:\n%s" % (
                len(found), "" if len(found) == 1 else "s", text)
        else:  # failed on its own too: the report goes beside the failure
            rep.sections.append(("dlsync races", text))
        rep.user_properties.append(("dlsync", "failed"))

    def pytest_runtest_logreport(self, report):
        if ("dlsync", "failed") in getattr(report, "user_properties", ()):
            self.failed += 1

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        out = getattr(node, "workeroutput", {}).get("dlsync")
        if out:
            self.workers.append(out)

    def pytest_sessionfinish(self, session):
        if hasattr(self.config, "workeroutput"):
            self.config.workeroutput["dlsync"] = self._counts()

    def _counts(self):
        s = dlsync.state()
        if not s:
            return {"mode": self.asked, "races": 0, "exchanges": 0, "injected": 0}
        return {"mode": s.mode, "races": s.races, "exchanges": s.exchanges, "injected": s.injected}

    def pytest_terminal_summary(self, terminalreporter):
        total = self._counts()
        for w in self.workers:
            for k in ("races", "exchanges", "injected"):
                total[k] += w.get(k, 0)
            total["mode"] = w.get("mode", total["mode"])
        terminalreporter.write_line(
            "dlsync: mode=%s races=%d exchanges=%d injected=%d tests failed by dlsync=%d%s" % (
                total["mode"], total["races"], total["exchanges"], total["injected"], self.failed,
                " (%d workers)" % len(self.workers) if self.workers else ""))


def pytest_configure(config):
    config.addinivalue_line("markers", "dlsync_race: the test expects dlsync to report a race (--dlsync=check)")
    mode = config.getoption("dlsync", None)
    if mode is None or not dlsync.active():
        return
    config.pluginmanager.register(_Plugin(config, mode), "dlsync-session")
