/* Host stacks for reports: capture (cheap: return addresses, and a handle to the Python frames
 * when the thread runs Python, pyframes.h) and symbolization (at report time, with dladdr).
 *
 * Frames inside libdlsync.so itself, the CUDA driver library and CUPTI are skipped when
 * symbolizing, so a report starts at the program's (or the framework's) own call. A native frame
 * is written "function+0xOFF (library)" when the dynamic symbol table names it, else
 * "library+0xOFF"; executables must be linked with -rdynamic for their functions to be named;
 * beside its text each native frame comes with its object, offset and build id, which the log
 * keeps for `dlsync report` to find its source line (objinfo.h). A Python frame is written "function (file:line)". Which frames a report shows is DLSYNC_STACK's
 * choice: `both` (the default) the native frames down to the first one inside the Python
 * interpreter (libpython, libffi, _ctypes), then the Python frames; `python` the Python frames
 * only (the native ones when the thread ran no Python); `native` today's native frames only, and
 * no Python frame is captured at all.
 * Thread-safe; capture never allocates after the first call in the process. */
#ifndef DLS_STACK_H
#define DLS_STACK_H

#include "../common/compiler.h"
#include "pyframes.h"

#include <stddef.h>
#include <stdint.h>

#define DLS_STACK_MAX 32

typedef struct {
    void *pc[DLS_STACK_MAX];
    int n;
    uint32_t py; /* the thread's Python frames (pyframes.h), 0 when none */
} dls_stack;

/* Captures the calling thread's return addresses into *s (at most DLS_STACK_MAX), and its Python
 * frames unless DLSYNC_STACK=native. */
void dls_stack_capture(dls_stack *s) DLS_UNLOCKED;

/* Captures the calling thread's return addresses alone into *s (no Python frames). Safe in a
 * signal handler once any capture has run in the process: it then allocates nothing and takes no
 * lock but the unwinder's, which the interrupted code cannot hold while it touches a program's
 * data. */
void dls_stack_capture_native(dls_stack *s) DLS_UNLOCKED;

/* Tells the capture that the program unloaded an object (dlclose): what it knew of the
 * object's code is forgotten before the next capture. Thread-safe, lock-free. */
void dls_stack_unloaded(void);

/* Where a native frame lies, for symbolizing it offline (`dlsync report` finds file:line with
 * it, objinfo.h): the object's path (NULL when no loaded object holds the address), the frame's
 * address in the object's own addresses (the pc, minus one for a return address, less the
 * object's load bias: what addr2line and llvm-symbolizer take; the pc itself without an object)
 * and the object's GNU build id in hex ("" or NULL when unknown). Valid during the emit call. */
typedef struct {
    const char *object;
    uintptr_t offset;
    const char *build_id;
} dls_stack_where;

/* Receives one symbolized frame: its text, and where it lies (NULL for a Python frame). */
typedef void (*dls_stack_emit)(const char *frame, const dls_stack_where *where, void *user);

/* Symbolizes the frames of s that are not in the shim, libcuda or libcupti, merged with its
 * Python frames as DLSYNC_STACK says (see above), at most `max` of them, each written by
 * `emit(frame_text, where, user)`: the native frames first, then the Python frames. Returns the
 * number emitted. */
int dls_stack_symbolize(const dls_stack *s, int max, dls_stack_emit emit, void *user) DLS_UNLOCKED;

/* Copies up to `max` Python frames of s into out, innermost first; returns their number (0 when
 * s has none, or they are pending or gone). */
int dls_stack_python(const dls_stack *s, dls_pyframe *out, int max);

#endif
