"""dlsync from Python: whether the dlsync shim runs in this process, in which mode, and what it
saw so far (races, exchanges, injected waits), through the query API of the shim's dlsync.h.

Importing this module never loads CUDA nor the shim: it looks the shim's functions up in the
running process. Start the program under the shim to have one::

    dlsync run --mode check -- python train.py      # or python -m dlsync run ...

then, in the program::

    import dlsync
    dlsync.active()          # True under the shim
    dlsync.mode()            # "check", "fix", "trace" or "off"
    with dlsync.no_races():  # raises dlsync.RaceError if a race is reported inside the block
        consume(produce())
    for race in dlsync.races():
        print(race)          # the report as dlsync wrote it, Python frames included

The pytest plugin (``pytest --dlsync``) is dlsync.pytest_plugin.
"""
import contextlib
import os
import warnings

from . import _capi

__all__ = [
    "active", "mode", "state", "races", "races_since", "exchanges", "injections", "no_races", "RaceError",
    "State", "Race", "Exchange", "Injection", "binary_path", "library_path",
]


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


def _frames(b):
    return [f for f in _text(b).split("\n") if f] if b else []


class State:
    """What the shim says of itself (dlsync_state): mode, how CUDA is observed (cupti), which
    frames reports show (stack), and its counters since start (exchanges, exports, imports,
    releases, ops, races, injected, fallbacks, race_reports, injections)."""

    def __init__(self, info):
        for name, _ in _capi.StateInfo._fields_:
            value = getattr(info, name)
            setattr(self, name, _text(value) if isinstance(value, bytes) else value)

    def __repr__(self):
        return ("State(mode=%r, cupti=%r, exchanges=%d, races=%d, injected=%d)"
                % (self.mode, self.cupti, self.exchanges, self.races, self.injected))


class Race:
    """One race report: kind ("write-read", ...), xid (the exchange), count (times seen),
    framework and symbol (the producer's), producer_op and consumer_op, producer_stack and
    consumer_stack (frames, innermost first: Python frames read "function (file:line)"), fix
    (what to change) and text (the whole report, as written on stderr)."""

    def __init__(self, index, info):
        self.index = index
        self.kind = _text(info.kind)
        self.xid = info.xid
        self.count = info.count
        self.framework = _text(info.framework)
        self.symbol = _text(info.symbol)
        self.producer_op = _text(info.producer_op)
        self.consumer_op = _text(info.consumer_op)
        self.producer_stack = _frames(info.producer_stack)
        self.consumer_stack = _frames(info.consumer_stack)
        self.fix = _text(info.fix)
        self.text = _text(info.text)

    def __str__(self):
        return self.text

    def __repr__(self):
        return "Race(kind=%r, xid=%d, producer=%r, consumer_op=%r)" % (
            self.kind, self.xid, self.symbol, self.consumer_op)


class Exchange:
    """One exchanged tensor: xid, producer and producer_symbol, consumer and consumer_symbol
    ("" until imported), device and device_id, dtype, shape, imports, released."""

    def __init__(self, info):
        self.xid = info.xid
        self.producer = _text(info.producer)
        self.producer_symbol = _text(info.producer_symbol)
        self.consumer = _text(info.consumer)
        self.consumer_symbol = _text(info.consumer_symbol)
        self.device = _text(info.device)
        self.device_id = info.device_id
        self.dtype = _text(info.dtype)
        self.shape = tuple(info.shape[i] for i in range(min(info.ndim, 8)))
        self.imports = info.imports
        self.released = bool(info.released)

    def __repr__(self):
        return "Exchange(xid=%d, %s -> %s, %s%s on %s:%d)" % (
            self.xid, self.producer or "?", self.consumer or "?", self.dtype, list(self.shape),
            self.device, self.device_id)


class Injection:
    """One ordering dlsync injected (fix mode): number, xid, what ("event-wait", "host-wait",
    ...), from_stream (dlsync's id of the stream waited for), to_stream (0: the host), reason."""

    def __init__(self, info):
        self.number = info.number
        self.xid = info.xid
        self.what = _text(info.what)
        self.from_stream = info.from_stream
        self.to_stream = info.to_stream
        self.reason = _text(info.reason)

    def __repr__(self):
        return "Injection(%d, xid=%d, %s, stream %d -> %s)" % (
            self.number, self.xid, self.what, self.from_stream,
            "host" if not self.to_stream else "stream %d" % self.to_stream)


class RaceError(AssertionError):
    """Raised by no_races() when races were reported inside its block; .races holds them."""

    def __init__(self, races):
        self.races = races
        super().__init__("dlsync reported %d race%s:\n%s" % (
            len(races), "" if len(races) == 1 else "s", "\n".join(r.text for r in races)))


def active():
    """True when the dlsync shim runs in this process (preloaded, or through `dlsync run`)."""
    return _capi.api.found


def state():
    """The shim's State, or None when it does not run here."""
    if not _capi.api.found:
        return None
    info = _capi.filled(_capi.StateInfo)
    _capi.api.state(info)
    return State(info)


def mode():
    """"check", "fix", "trace" or "off" (DLSYNC_MODE), or None without the shim."""
    s = state()
    return s.mode if s else None


def races(start=0):
    """The race reports written so far (check mode), from index `start` on."""
    out = []
    if not _capi.api.found:
        return out
    index = start
    while True:
        info = _capi.filled(_capi.RaceInfo)
        if _capi.api.race(index, info) != 0:
            return out
        out.append(Race(index, info))
        index += 1


def _recent(count, kept, info_type, get, wrap):
    """The records numbered 1 to `count` that the shim still keeps (the last `kept`), each read by
    get(number, info) into a fresh info_type and given to wrap."""
    out = []
    for number in range(max(1, count - kept + 1), count + 1):
        info = _capi.filled(info_type)
        if get(number, info) == 0:
            out.append(wrap(info))
    return out


def exchanges():
    """The exchanges seen since this module was imported (the shim keeps the last 4,096)."""
    s = state()
    return _recent(s.exchanges, 4096, _capi.ExchangeInfo, _capi.api.exchange, Exchange) if s else []


def injections():
    """The orderings dlsync injected so far (the last 1,024)."""
    s = state()
    return _recent(s.injections, 1024, _capi.InjectionInfo, _capi.api.injection, Injection) if s else []


def _snapshot():
    """How often each race report's hazard was seen so far, by report index."""
    return [r.count for r in races()]


def races_since(mark):
    """The races reported since `mark` (a _snapshot()): new reports, and earlier ones whose
    hazard was seen again (dlsync writes a hazard's report once and counts its repeats)."""
    return [r for r in races() if r.index >= len(mark) or r.count > mark[r.index]]


@contextlib.contextmanager
def no_races():
    """Fails the block (RaceError) when dlsync reports a race while it runs. Races are reported
    in check mode only; without the shim, or in another mode, the block runs unchecked (with
    one warning)."""
    s = state()
    if not s or s.mode != "check":
        warnings.warn("dlsync.no_races(): %s; the block is not checked" % (
            "dlsync is not running in this process" if not s else "mode is %s, not check" % s.mode),
            RuntimeWarning, stacklevel=3)
        yield
        return
    mark = _snapshot()
    yield
    found = races_since(mark)
    if found:
        raise RaceError(found)


_here = os.path.dirname(os.path.abspath(__file__))


def binary_path():
    """The dlsync command of this installation (inside the package), or None."""
    path = os.path.join(_here, "bin", "dlsync")
    return path if os.access(path, os.X_OK) else None


def library_path():
    """The libdlsync.so of this installation (inside the package), or None. `dlsync run` puts it
    in LD_PRELOAD; set it there yourself to preload the shim without the command."""
    path = os.path.join(_here, "lib", "libdlsync.so")
    return path if os.path.exists(path) else None


if _capi.api.found:
    _capi.api.record_exchanges(1)
