/* Python's GIL releases, for the Python frames of reports (report/pyframes.h).
 *
 * In check mode (the only mode that writes reports), unless DLSYNC_STACK=native, the binding
 * engine points the callers' GOT slots of PyEval_SaveThread and PyEval_RestoreThread at the
 * hooks below (ctypes' calls of a CDLL function, numpy's and the frameworks' operators that
 * release the GIL: Py_BEGIN_ALLOW_THREADS and pybind11's gil_scoped_release call them). A
 * release notes the thread state it returned in the thread's dls_pythread; taking the GIL back
 * fills the Python frames captures made meanwhile were waiting for. Cost per hooked release and
 * take-back: a thread-local store, a load and a test, about 48 instructions for the pair with the
 * entries (`make bench`, bench_pyframes). Each
 * object defining them (a libpython, or the executable of a static Python; one per dlmopen
 * namespace, up to four) gets its own pair of entries calling its own functions, and, when it is
 * first seen, its Python frame functions are looked up in its own scope (as the loader binds
 * them for it, caller.h) and registered with report/pyframes.h. dlsync never links libpython;
 * other modes hook nothing here. */
#ifndef DLS_PYTHREAD_H
#define DLS_PYTHREAD_H

#include "engine_hook.h"

#include <stddef.h>

/* The hooks for the binding engine (*n = 0 outside check mode or with DLSYNC_STACK=native). */
const dls_engine_hook *dls_pythread_hooks(size_t *n);

#endif
