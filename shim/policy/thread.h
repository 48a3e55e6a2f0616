/* The policy's per-thread state, in one block: the thread's horizon on the host clock (queue.h)
 * and what a receiver carries from a call's ENTER to its EXIT (sink.c). The receivers ask for the
 * block once per delivery (dls_pol_thread_self) and hand it to what they call, so a delivery
 * reads the thread-local storage once. */
#ifndef DLS_POL_THREAD_H
#define DLS_POL_THREAD_H

#include "types.h"

/* A thread's horizon on the host clock (queue.h says what it means): every end stamp below `h`
 * belongs to a call known to have returned; `later` waits for the outermost call to return. */
typedef struct {
    uint64_t h, later;
} dls_pol_horizon_state;

typedef struct {
    dls_pol_horizon_state horizon;
    uint32_t begun_corr; /* check: the call whose begin dls_pol_check_on_begins stamped */
    int registered;      /* registered for the thread-exit hook */
    uint32_t sync_corr;  /* the host synchronize in progress, and the capture of what it completes */
    uint64_t snap;
    uint32_t after_corr;      /* fix: the consumer access whose EXIT records the after event, */
    dls_pol_stream *after_st; /* on this stream (held: stream_table.h) */
    uint32_t cleared_corr;    /* the operation whose ENTER the index cleared, as `cleared` says */
    uint64_t cleared;
    uint32_t entered_corr; /* the work whose delivered ENTER built `entered`, which its EXIT reuses */
    dls_pol_access entered;
    uint32_t legacy_corr;      /* check: the legacy-stream access whose verdict waits for its EXIT, */
    dls_pol_stream *legacy_st; /* on this stream (held) */
} dls_pol_thread;

/* The calling thread's block (zeroed when the thread starts). */
dls_pol_thread *dls_pol_thread_self(void);

#endif
