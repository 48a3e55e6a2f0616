/* The happens-before engine: a model of CUDA streams, events and host threads that answers
 * "is the next operation of this stream ordered after that earlier operation, and if not, which
 * waits would make it so?". Which memory an operation touches is the caller's business (the
 * policy keeps its own index of watched ranges, shim/policy/index.c).
 *
 * Pure C: no CUDA types, no I/O, no globals. Everything is identified by opaque 64-bit ids the
 * caller chooses: streams (stable ids, never reused), contexts, host threads and events.
 *
 * Model
 * - Each stream has positions 1, 2, 3, ...: every operation enqueued on it (dls_hb_op, and event
 *   records and waits, which are operations too) takes the next position. Operations on one
 *   stream run in order.
 * - An operation enqueued by thread T on stream S is ordered after everything T had observed
 *   complete (host syncs), after S's earlier work, and after what the legacy default stream rules
 *   imply in S's context: an operation on the legacy stream waits for all prior work of the
 *   context's live blocking and per-thread streams; an operation on a blocking or per-thread
 *   stream waits for the prior work of the context's live legacy stream. Non-blocking streams
 *   take no part. A removed stream takes no part in these rules any more.
 * - An event record captures the recording stream's position (and all it is ordered after); a
 *   re-record replaces the capture. An event wait orders the waiting stream after the most recent
 *   capture; waiting on a never-recorded event orders nothing (it is still an operation).
 * - Host syncs order a thread after work: a stream (cudaStreamSynchronize, or a query that
 *   returned success) or an event's record or capture (cudaEventSynchronize / successful query;
 *   a context or device synchronize is a capture of every stream of the context, or of every
 *   stream, taken when it begins and applied with dls_hb_sync_event when it returns). A
 *   synchronous copy is an operation followed by a stream sync.
 * - Knowledge is transitive: being ordered after an operation means being ordered after
 *   everything that operation was ordered after.
 *
 * Host order (dls_hb_when): every rule above that orders the operations of different threads by
 * the order of their calls (the legacy rules, "the most recent record" of an event, a stream's
 * latest position as an event record captures it) holds only where the calls are ordered on the
 * host: CUDA defines these implicit orderings by the order in which the driver enqueued the
 * calls, and two calls that overlap in time on different threads may be enqueued in either order,
 * whatever order the caller learned of them in. Each operation therefore carries two host stamps
 * that the caller hands out: `begin`, below which every stamp belongs to a call known to have
 * returned before this call began, and `end`, taken after the call returned (the engine keeps
 * ends non-decreasing: an end below an earlier one counts as that one). Call A is known to
 * precede call B when A.end < B.begin; nothing else orders calls of different threads. Then:
 * - the legacy rules join another stream only as far as its last operation with end < begin
 *   (with what that operation was ordered after), not its latest position;
 * - an event record captures its stream as far as its last earlier operation with end < begin,
 *   or its thread's own last operation there when later (the thread's calls follow each other),
 *   plus what the record itself is ordered after (the thread, the legacy rules as of begin);
 * - an event wait is ordered after the most recent record when that record's end < begin; when
 *   only the most recent record may follow the wait (its end >= begin) and the one before it
 *   precedes the wait, after what both captures have in common (either may be the one the
 *   driver used); otherwise after nothing of the event. A record of the event that is still in
 *   flight when the wait is told is the caller's to know (then it enqueues a plain dls_hb_op).
 * - As-of questions look back over a stream's last DLS_HB_POINTS operations (a dls_hb_op_again
 *   of n is one, its operations all ending at its end), over the end stamps of its last
 *   DLS_HB_ENDS operations for its own position, and find the asking thread's own last
 *   operation whatever came since (every later call of the thread follows it); further back they
 *   find nothing: fewer orderings, never a wrong one.
 * Operations of one stream keep the order in which they are told (positions), whoever enqueued
 * them: a stream's position covers all its earlier positions, which is sound because every use
 * of a position is of a prefix of the stream whose calls all returned before the user began.
 * Queries (dls_hb_ordered, dls_hb_frontier_waits) concern the next operation, which begins after
 * every call told so far, so they use the latest positions. The cost of this rule: waits that
 * the caller injects where the order may or may not hold. dls_hb_ordered_as_of asks about an
 * operation whose call began at a given stamp, while calls told since may have overlapped it:
 * every stream it is joined to (its own, the legacy rules') counts as of that begin.
 *
 * Waits for a captured frontier (dls_hb_frontier_waits): for each stream X with an entry the
 * prospective operation is not ordered after, one wait (X, current position of X), which is what
 * recording an event on X now would capture; a wait whose target is ordered before another
 * wait's target is dropped. The answer is sorted by stream id and is empty when the operation is
 * already ordered. Once the caller has injected them it reports them as ordinary event records
 * and waits.
 *
 * Costs: an operation that brings no new ordering (same thread knowledge, legacy stream already
 * known, no event to join) is O(1) whatever the number of streams. Operations that bring new
 * knowledge, event waits and host syncs join clocks: O(number of streams). Event records share
 * the stream's clock (copy-on-write), O(1). Context and device captures visit every stream of
 * the context (ever added and not forgotten). Memory: a stream keeps its record (about 48 bytes
 * plus one 8-byte clock entry per stream slot it has learned of) until it is forgotten; a later
 * stream reuses a forgotten one's slot, so the clocks are as wide as the most streams known at
 * once, not as all streams ever made.
 *
 * Thread safety: the engine is not internally locked and has no global state. Every call on one
 * engine, queries included (they use the engine's scratch memory), must be serialized by the
 * caller, typically with one mutex per engine held for the whole call. Distinct engines are
 * independent.
 *
 * Errors: functions return 0 or a positive errno value: ENOMEM (allocation failed; the model is
 * unchanged), ENOENT (unknown or removed stream), EEXIST (stream id already added), EINVAL (bad
 * argument). Nothing aborts. */
#ifndef DLS_HB_H
#define DLS_HB_H

#include <stddef.h>
#include <stdint.h>

typedef struct dls_hb dls_hb;

typedef enum {
    DLS_HB_LEGACY = 0,   /* the context's legacy default stream (at most one live per context) */
    DLS_HB_PER_THREAD,   /* a per-thread default stream: behaves as a blocking stream */
    DLS_HB_BLOCKING,     /* a stream created without cudaStreamNonBlocking */
    DLS_HB_NON_BLOCKING, /* exempt from legacy-stream synchronization */
} dls_hb_stream_kind;

/* The host stamps of one operation's call (see "Host order" above). An operation the caller
 * tells before its call is made (a plan) may have a begin above its end. */
typedef struct {
    uint64_t begin, end;
} dls_hb_when;

/* A begin stamp after every call told so far: the next operation's (see "Queries"). */
#define DLS_HB_NOW UINT64_MAX

/* How many recent operations of a stream as-of questions look back over. */
#define DLS_HB_POINTS 64

/* A (stream, position) pair: a wait target, or one entry of a captured frontier. */
typedef struct {
    uint64_t stream;
    uint64_t pos;
} dls_hb_epoch;

/* Creates an empty engine, or returns NULL when memory is short. */
dls_hb *dls_hb_create(void);

/* Frees the engine and everything in it. NULL is ignored. */
void dls_hb_destroy(dls_hb *e);

/* Makes the queries wary (1) or not (0, the default) of streams that another thread may be
 * destroying while the asking call is under way: the next operation of a legacy stream is then
 * not taken as ordered after the work of a user-created blocking stream whose last operation
 * another thread told, and that no legacy-stream operation told so far has joined. Once the
 * asking call's own operation is enqueued, that stream may be gone, and CUDA does not say that the
 * legacy stream waits for a destroyed stream's pending work (a thread does not destroy a stream
 * behind its own back). Operations told are applied as before (a stream removed before an
 * operation is told takes no part in its legacy rule). */
void dls_hb_set_wary(dls_hb *e, int wary);

/* Adds stream `stream` of context `ctx` with the given kind. EEXIST when the id is known (added
 * and not forgotten), EINVAL for a bad kind or a second live legacy stream in `ctx`. Adding
 * a legacy stream orders its first operation after all prior work of the context's blocking
 * and per-thread streams. */
int dls_hb_stream_add(dls_hb *e, uint64_t stream, uint64_t ctx, dls_hb_stream_kind kind);

/* Removes a stream: it accepts no more operations and leaves the legacy rules of its context.
 * Its operations stay in the model (they may still be pending on the device). ENOENT when
 * unknown or already removed. */
int dls_hb_stream_remove(dls_hb *e, uint64_t stream);

/* Forgets removed stream `stream`, whose work the caller knows complete: it becomes unknown (every
 * question about it answers ENOENT, its id may be added again) and a later dls_hb_stream_add may
 * take its slot; that stream's positions then continue after the forgotten one's last, so what
 * any clock knew of the old stream never counts as knowledge of the new one. ENOENT when unknown
 * or not removed. */
int dls_hb_stream_forget(dls_hb *e, uint64_t stream);

/* Forgets what thread `thread` had observed (call when the OS thread exits, since thread ids
 * may be reused). Unknown threads are ignored. */
void dls_hb_thread_remove(dls_hb *e, uint64_t thread);

/* Forgets event `event` (cudaEventDestroy). Unknown events are ignored. */
void dls_hb_event_remove(dls_hb *e, uint64_t event);

/* Enqueues an operation by thread `thread` on `stream`, made by a call with host stamps `when`;
 * stores its position in *pos (may be NULL). ENOENT when the stream is unknown or removed. */
int dls_hb_op(dls_hb *e, uint64_t thread, uint64_t stream, dls_hb_when when, uint64_t *pos);

/* Enqueues n more operations by the thread of the previous call, which must be a successful
 * dls_hb_op or dls_hb_op_again on the same `stream`, with no other call on the engine between
 * them: such operations learn nothing their predecessor did not, but what a later begin would
 * teach through the legacy rules (the caller gives them the predecessor's begin, or accepts to
 * learn less), so this is n calls of dls_hb_op in O(1) with no look-ups, all taken to end at `end`;
 * *pos (may be NULL) gets the position of the last one. ENOENT when the stream is unknown or
 * removed. */
int dls_hb_op_again(dls_hb *e, uint64_t stream, uint64_t n, uint64_t end, uint64_t *pos);

/* Enqueues an event record of `event` on `stream` (an operation); the event now captures what the
 * record covers (see "Host order"), the previous record is kept for the waits that may precede
 * this one. */
int dls_hb_event_record(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t event, dls_hb_when when, uint64_t *pos);

/* Enqueues a wait of `stream` on `event` (an operation) ordered after the event's most recent
 * record as "Host order" says; an event never recorded (or removed) orders nothing. */
int dls_hb_event_wait(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t event, dls_hb_when when, uint64_t *pos);

/* Host syncs: thread `thread` has observed completion of all work enqueued so far on `stream`;
 * of `event`'s most recent record or capture (nothing when never recorded). ENOENT for an
 * unknown stream; unknown events order nothing. */
int dls_hb_sync_stream(dls_hb *e, uint64_t thread, uint64_t stream);
int dls_hb_sync_event(dls_hb *e, uint64_t thread, uint64_t event);

/* Captures: what a host synchronize that begins now (or, `begin` not DLS_HB_NOW, whose call began
 * at `begin`: each stream as of then, see "Host order") will have completed when it returns, kept
 * as event `event` (an id the caller uses for nothing else) until dls_hb_event_remove. Apply one
 * with dls_hb_sync_event (the host synchronize returned) or dls_hb_event_wait (a stream was made
 * to wait for an event recorded after the capture). Work enqueued after the capture, by any
 * thread, is not part of it. Nothing is enqueued. ENOMEM leaves the event unchanged. A capture
 * precedes every later wait on it (it has no record a wait could overlap), and it replaces the
 * event's history (a later record's predecessor is the capture); dls_hb_capture_event copies
 * `from`'s most recent record with its end.
 * - dls_hb_capture_stream: `stream`'s current position and all it is ordered after (ENOENT when
 *   unknown); dls_hb_capture_event: `from`'s most recent record (nothing when never recorded);
 * - dls_hb_capture_at: operation `pos` of `stream` and what its newest point at or below pos is
 *   ordered after (the operation alone when no point is that old; EINVAL for a position it has
 *   not reached, ENOENT for an unknown stream);
 * - dls_hb_capture_context: every stream of `ctx`; dls_hb_capture_all: every stream. */
int dls_hb_capture_stream(dls_hb *e, uint64_t event, uint64_t stream, uint64_t begin);
int dls_hb_capture_at(dls_hb *e, uint64_t event, uint64_t stream, uint64_t pos);
int dls_hb_capture_event(dls_hb *e, uint64_t event, uint64_t from);
int dls_hb_capture_context(dls_hb *e, uint64_t event, uint64_t ctx, uint64_t begin);
int dls_hb_capture_all(dls_hb *e, uint64_t event, uint64_t begin);

/* Captures in event `event` (as dls_hb_capture_stream does) what completing the operation last
 * told on `stream`, one of thread `thread` whose call began at `begin`, completes: the operation
 * with all it is ordered after, or, when an earlier operation of the stream may have been
 * enqueued after it (its end >= begin), what an event record beginning then would capture
 * (see "Host order"), without the operation itself. For a call that waits for its own operation
 * (a synchronous copy). ENOENT for an unknown stream, ENOMEM (the event is then unchanged). */
int dls_hb_capture_op(dls_hb *e, uint64_t event, uint64_t thread, uint64_t stream, uint64_t begin);

/* The highest position of `stream` that event `event`'s capture (or record) is ordered after:
 * what completing it completes of that stream. 0 for unknown events and streams. */
uint64_t dls_hb_event_covers(const dls_hb *e, uint64_t event, uint64_t stream);

/* The waits that order the next operation of `thread` on `stream` after every entry of a
 * captured frontier f[0..nf) (entries naming unknown streams: EINVAL; see "Waits for a
 * captured frontier" above). Writes min(total, cap) waits to out and the total to *n (so
 * *n > cap means truncated). */
int dls_hb_frontier_waits(dls_hb *e, uint64_t thread, uint64_t stream, const dls_hb_epoch *f, size_t nf,
                          dls_hb_epoch *out, size_t cap, size_t *n);

/* Sets *before to 1 when operation `xpos` of stream `x` is ordered before operation `ypos` of
 * stream `y` (removed streams included): the same stream up to ypos, or what y's latest kept
 * operation at or below ypos is ordered after (y's last DLS_HB_POINTS operations; further back
 * it finds nothing, 0: fewer orderings, never a wrong one). ENOENT when either stream is
 * unknown. A frontier keeps only its entries no other entry is ordered after. */
int dls_hb_op_before(const dls_hb *e, uint64_t x, uint64_t xpos, uint64_t y, uint64_t ypos, int *before);

/* Sets *ordered to 1 when the next operation of `thread` on `stream` is ordered after position
 * `pos` of stream `x` (always for pos 0), else 0. ENOENT for unknown streams (`stream` also
 * when removed). */
int dls_hb_ordered(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t x, uint64_t pos, int *ordered);

/* As dls_hb_ordered, for the operation of a call of `thread` on `stream` that began at `begin`
 * (see "Host order"): the operations other threads told since may have overlapped the call, so
 * its stream, the legacy stream that joins it and the blocking streams the legacy stream joins
 * count as of `begin` (their last operations whose calls ended before it). With DLS_HB_NOW it is
 * dls_hb_ordered. */
int dls_hb_ordered_as_of(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t begin, uint64_t x, uint64_t pos,
                         int *ordered);

#endif
