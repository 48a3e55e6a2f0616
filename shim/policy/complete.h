/* Host completion: a host synchronize (stream, event, context, a successful query, a synchronous
 * copy or free) completes exactly the work enqueued before it began. Its ENTER captures that work
 * (an hb capture, kept as a private hb event); its successful EXIT applies the capture to the
 * synchronizing thread and to the streams' `done` positions. Work other threads enqueue meanwhile
 * stays pending. The shim's own host waits do the same around their CUDA call. Lock held. The
 * receivers' ENTER and EXIT of a host synchronize are host_sync.h's. */
#ifndef DLS_POL_COMPLETE_H
#define DLS_POL_COMPLETE_H

#include "types.h"

/* A fresh private hb event id (a capture, or an injected record). */
uint64_t dls_pol_snap_id(void) DLS_REQUIRES(dls_pol_g.lock);

/* Captures what a host synchronize completes, as a private hb event: of stream st, of user event
 * ev, of context ctx (every context when ctx is 0); the stream and context captures as of the
 * synchronize's begin (check: the work told since may have been enqueued after it began; fix and
 * the shim's own waits: DLS_HB_NOW). Returns its id, or 0 when memory is short (then nothing will
 * be learned from the synchronize: warned once). */
uint64_t dls_pol_snap_stream(const dls_pol_stream *st, uint64_t begin) DLS_REQUIRES(dls_pol_g.lock);
uint64_t dls_pol_snap_event(uint64_t ev) DLS_REQUIRES(dls_pol_g.lock);
uint64_t dls_pol_snap_ctx(uintptr_t ctx, uint64_t begin) DLS_REQUIRES(dls_pol_g.lock);

/* The same for the point right after operation pos of stream st (an event recorded there), with
 * what st's newest operation at or below pos that hb still keeps is ordered after; 0 when memory
 * is short or hb no longer knows st. */
uint64_t dls_pol_snap_at(const dls_pol_stream *st, uint64_t pos) DLS_REQUIRES(dls_pol_g.lock);

/* Thread tid's host synchronize of capture snap returned, its call ending at stamp `end`: tid and
 * every stream's `done` learn what it completed; destroyed streams now known complete are
 * forgotten (stream_table.h). The capture is forgotten (0 is ignored). */
void dls_pol_snap_complete(uint64_t snap, uint64_t tid, uint64_t end) DLS_REQUIRES(dls_pol_g.lock);

/* 1 when the operation of thread tid on `stream` (DLS_POL_HOST_STREAM: the host) of a call that
 * began at stamp `begin` (DLS_HB_NOW: the next one) is ordered after `at`: hb says so as of the
 * begin (dls_hb_ordered_as_of), at is complete (a host synchronize of any thread that returned
 * before the call began saw it complete), or at's stream was forgotten (destroyed, with all its
 * work seen complete). The one ordering question of check and fix: fix asks about the next
 * operation, check about the call it judges, which other threads' calls may have overlapped. */
int dls_pol_ordered(uint64_t tid, uint64_t stream, uint64_t begin, const dls_hb_epoch *at) DLS_REQUIRES(dls_pol_g.lock);

/* Forgets capture snap without learning from it (0 is ignored). */
void dls_pol_snap_drop(uint64_t snap) DLS_REQUIRES(dls_pol_g.lock);

#endif
