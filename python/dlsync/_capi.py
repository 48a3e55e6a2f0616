"""The query API of dlsync.h (version 1), read with ctypes from the running process.

Nothing here loads a library: the functions are looked up in the process's global scope, where
a preloaded libdlsync.so puts them, so a process without the shim finds none of them."""
import ctypes

QUERY_VERSION = 1
NOT_FOUND = 11

_c = ctypes


class StateInfo(_c.Structure):
    _fields_ = [
        ("size", _c.c_uint32),
        ("version", _c.c_uint32),
        ("shim_version", _c.c_char_p),
        ("mode", _c.c_char_p),
        ("cupti", _c.c_char_p),
        ("stack", _c.c_char_p),
        ("recording", _c.c_int),
        ("exchanges", _c.c_uint64),
        ("exports", _c.c_uint64),
        ("imports", _c.c_uint64),
        ("releases", _c.c_uint64),
        ("ops", _c.c_uint64),
        ("races", _c.c_uint64),
        ("injected", _c.c_uint64),
        ("fallbacks", _c.c_uint64),
        ("race_reports", _c.c_uint64),
        ("injections", _c.c_uint64),
    ]


class RaceInfo(_c.Structure):
    _fields_ = [
        ("size", _c.c_uint32),
        ("count", _c.c_uint32),
        ("xid", _c.c_uint64),
        ("kind", _c.c_char_p),
        ("framework", _c.c_char_p),
        ("symbol", _c.c_char_p),
        ("producer_op", _c.c_char_p),
        ("consumer_op", _c.c_char_p),
        ("producer_stack", _c.c_char_p),
        ("consumer_stack", _c.c_char_p),
        ("fix", _c.c_char_p),
        ("text", _c.c_char_p),
    ]


class ExchangeInfo(_c.Structure):
    _fields_ = [
        ("size", _c.c_uint32),
        ("imports", _c.c_uint32),
        ("xid", _c.c_uint64),
        ("released", _c.c_int32),
        ("device_id", _c.c_int32),
        ("ndim", _c.c_int32),
        ("reserved", _c.c_int32),
        ("producer", _c.c_char * 32),
        ("producer_symbol", _c.c_char * 96),
        ("consumer", _c.c_char * 32),
        ("consumer_symbol", _c.c_char * 96),
        ("device", _c.c_char * 16),
        ("dtype", _c.c_char * 24),
        ("shape", _c.c_int64 * 8),
    ]


class InjectionInfo(_c.Structure):
    _fields_ = [
        ("size", _c.c_uint32),
        ("reserved", _c.c_uint32),
        ("number", _c.c_uint64),
        ("xid", _c.c_uint64),
        ("from_stream", _c.c_uint64),
        ("to_stream", _c.c_uint64),
        ("what", _c.c_char * 24),
        ("reason", _c.c_char * 128),
    ]


class _Api:
    """The shim's query functions, or none of them."""

    def __init__(self):
        self.found = False
        try:
            process = _c.PyDLL(None)  # calls keep the GIL: they are short and never block
            version = process.dlsync_query_version
        except (AttributeError, OSError):
            return
        version.restype = _c.c_int
        version.argtypes = []
        self.version = version()
        if self.version < QUERY_VERSION:
            return
        self.state = self._fn(process, "dlsync_state", [_c.POINTER(StateInfo)])
        self.race = self._fn(process, "dlsync_race", [_c.c_uint64, _c.POINTER(RaceInfo)])
        self.record_exchanges = self._fn(process, "dlsync_record_exchanges", [_c.c_int])
        self.exchange = self._fn(process, "dlsync_exchange", [_c.c_uint64, _c.POINTER(ExchangeInfo)])
        self.injection = self._fn(process, "dlsync_injection", [_c.c_uint64, _c.POINTER(InjectionInfo)])
        self.found = True

    @staticmethod
    def _fn(process, name, argtypes):
        f = getattr(process, name)
        f.restype = _c.c_int
        f.argtypes = argtypes
        return f


def filled(cls):
    """An instance of one of the structures above with its size set."""
    info = cls()
    info.size = _c.sizeof(cls)
    return info


api = _Api()
