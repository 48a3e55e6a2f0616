/* Host stacks for reports: capture (cheap: return addresses only) and symbolization (at report
 * time, with dladdr).
 *
 * Frames inside libdlsync.so itself, the CUDA driver library and CUPTI are skipped when
 * symbolizing, so a report starts at the program's (or the framework's) own call. A frame is
 * written "function+0xOFF (library)" when the dynamic symbol table names it, else
 * "library+0xOFF"; executables must be linked with -rdynamic for their functions to be named.
 * Thread-safe; capture never allocates after the first call in the process. */
#ifndef DLS_STACK_H
#define DLS_STACK_H

#include <stddef.h>

#define DLS_STACK_MAX 32

typedef struct {
    void *pc[DLS_STACK_MAX];
    int n;
} dls_stack;

/* Captures the calling thread's return addresses into *s (at most DLS_STACK_MAX). */
void dls_stack_capture(dls_stack *s);

/* Symbolizes the frames of s that are not in the shim, libcuda or libcupti, at most `max`
 * of them, each written by `emit(frame_text, user)`. Returns the number emitted. */
int dls_stack_symbolize(const dls_stack *s, int max, void (*emit)(const char *frame, void *user), void *user);

#endif
