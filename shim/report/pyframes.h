/* Python frames for reports: the file, line and function of each Python frame the reporting
 * thread was running, innermost first.
 *
 * dlsync never links libpython. The hooks layer (hooks/pythread.h) finds each libpython in the
 * process through the binding engine, as the capsule layer does (an object whose GOT refers to
 * PyEval_SaveThread: ctypes, numpy, torch, ...), looks the functions below up in that object's
 * own scope and registers them here. Only functions of Python's public C API are used, found at
 * run time (Python 3.10 or later: PyGC_Disable is needed):
 *   Py_IsInitialized, PyGILState_Check, PyGILState_GetThisThreadState, PyEval_GetFrame,
 *   PyFrame_GetBack, PyFrame_GetCode, PyFrame_GetLineNumber, PyObject_GetAttrString,
 *   PyUnicode_AsUTF8AndSize, Py_DecRef, PyErr_Fetch, PyErr_Restore, PyErr_Clear, PyGC_Disable,
 *   PyGC_Enable, and, where the interpreter has it, PyThreadState_GetUnchecked (3.13) or
 *   _PyThreadState_UncheckedGet (3.5-3.12) to confirm that the current thread state is this
 *   thread's (PyGILState_Check answers 1 whenever subinterpreters exist).
 *
 * Frames are read only by a thread that holds the GIL (those checks), with the collector
 * disabled for the walk (a frame object made for the walk must not start a collection, which
 * could run finalizers: no Python code runs), the thread's pending exception kept, and every
 * reference taken given back (none drops an object's last one: each is also held by a frame).
 * A thread that released the GIL through a hooked PyEval_SaveThread (a ctypes.CDLL call, a
 * framework operator) cannot read its frames; a capture there is left pending and filled when
 * the thread takes the GIL back through the matching PyEval_RestoreThread, with the frames it
 * is in then, which are those it released the GIL in (a thread's frames change only while it
 * runs Python). Reports waiting for such frames are written then (race.h).
 *
 * Captured frames live in a ring of slots (allocated at the first capture, about 0.9 MB); a
 * capture's handle names its slot and generation, so a handle whose slot was reused since reads
 * as "no frames". Thread-safe: one leaf lock around the ring, never held across a Python call. */
#ifndef DLS_PYFRAMES_H
#define DLS_PYFRAMES_H

#include "../common/export.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The functions of one libpython (NULL for those it lacks; the optional ones are named above). */
typedef struct {
    uintptr_t base; /* load address of the object defining them (the executable for a static Python) */
    int (*is_initialized)(void);
    int (*gil_check)(void);
    void *(*this_thread_state)(void);
    void *(*current_state)(void); /* optional */
    void *(*get_frame)(void);
    void *(*frame_back)(void *frame);
    void *(*frame_code)(void *frame);
    int (*frame_line)(void *frame);
    void *(*getattr)(void *obj, const char *name);
    const char *(*utf8)(void *str, ssize_t *len);
    void (*decref)(void *obj);
    void (*err_fetch)(void **type, void **value, void **tb);
    void (*err_restore)(void *type, void *value, void *tb);
    void (*err_clear)(void);
    int (*gc_disable)(void);
    int (*gc_enable)(void);
} dls_py_api;

/* Registers a libpython's functions (copied). Returns 0, or -1 when a required one is missing
 * or four are registered already. */
int dls_pyframes_add(const dls_py_api *api);

/* Captures the calling thread's Python frames (see above): a handle for dls_pyframes_get, or 0
 * when it runs no Python (or every slot of the pending list of the thread is in use). */
uint32_t dls_pyframes_capture(void);

/* The thread-local state the PyEval_SaveThread / PyEval_RestoreThread hooks keep. */
#define DLS_PYTHREAD_DEPTH 8
typedef struct {
    unsigned depth;                     /* hooked releases of the GIL not yet taken back */
    void *released[DLS_PYTHREAD_DEPTH]; /* the thread state each of them returned */
    unsigned npending;                  /* captures waiting for the GIL (dls_pyframes_restored) */
} dls_pythread;

extern __thread dls_pythread dls_pythread_now DLS_HIDDEN;

/* Called by the PyEval_SaveThread hook after the real call released the GIL (state: its result). */
static inline void dls_pythread_released(void *state)
{
    dls_pythread *t = &dls_pythread_now;
    if (t->depth < DLS_PYTHREAD_DEPTH)
        t->released[t->depth] = state;
    t->depth++;
}

/* Fills the captures pending at the current depth and writes the reports waiting for them; the
 * GIL is held again. */
void dls_pyframes_restored(void);

/* Called by the PyEval_RestoreThread hook after the real call took the GIL back. */
static inline void dls_pythread_restored(void)
{
    dls_pythread *t = &dls_pythread_now;
    if (t->npending != 0)
        dls_pyframes_restored();
    if (t->depth)
        t->depth--;
}

/* One frame as dls_pyframes_get copies it out. */
typedef struct {
    char function[96];
    char file[200];
    int line;
} dls_pyframe;

/* What a handle holds now. */
typedef enum {
    DLS_PYFRAMES_NONE = 0, /* no frames: 0, reused slot, or the thread ran no Python */
    DLS_PYFRAMES_PENDING,  /* waiting for its thread to take the GIL back */
    DLS_PYFRAMES_READY,
} dls_pyframes_state;

/* Copies up to `max` frames of handle h into out (innermost first); *n gets their number.
 * Returns the state. */
dls_pyframes_state dls_pyframes_get(uint32_t h, dls_pyframe *out, int max, int *n);

/* 1 when h is pending for the calling thread (its frames come when it takes the GIL back). */
int dls_pyframes_pending_here(uint32_t h);

/* Called on a thread, outside every pyframes lock, each time frames it was waiting for have
 * arrived (its pending handles are READY or NONE): whoever waits on them (race.c's reports)
 * registers it, so pyframes calls nothing above it. */
typedef void (*dls_pyframes_arrived_fn)(void);

/* Registers fn as the arrival callback (NULL: none); the last registration wins. */
void dls_pyframes_on_arrival(dls_pyframes_arrived_fn fn);

/* 1 when the object loaded at `fbase` (file `path`) is part of the Python interpreter or of the
 * foreign-function layer between Python and native code (a libpython, libffi, _ctypes): in a
 * stack of both kinds, the native frames end there and the Python frames begin. */
int dls_pyframes_interpreter_object(const void *fbase, const char *path);

#endif
