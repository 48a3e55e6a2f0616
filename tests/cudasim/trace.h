/* trace.h: the simulator's trace, the oracle's record of a run (tests/cudasim/trace.c writes it).
 *
 * The contract, as agreed with the reference that reads it:
 *
 * # cudasim trace v1 (the oracle's input) — spec agreed between the simulator and the reference
 *
 * Enabled by CUDASIM_TRACE=PATH (the simulator's libcuda.so.1 opens PATH, O_CLOEXEC, at first use,
 * truncating it; `%p` in PATH is replaced by the pid). One text line per fact, written under ONE
 * trace mutex that also hands out the stamp, so the file's line order IS stamp order. Every line
 * starts with its stamp (a decimal counter from 1) and a tag. Ids are decimal. Addresses are 0x-hex.
 * Nothing is written when CUDASIM_TRACE is unset (no cost beyond one branch per call).
 *
 *   <st> C <call> <tid> <name>        an API call begins: the FIRST thing cudasim_call_enter does
 *                                     (before the ENTER hook, i.e. before dlsync's callback). <call>
 *                                     is the call's correlation id (unique, process-wide). Calls made
 *                                     from inside a hook (dlsync's own records/waits) are ordinary
 *                                     calls nested inside the outer call of the same thread.
 *   <st> R <call>                     the call returns: the LAST thing cudasim_call_exit does (after
 *                                     the EXIT hook). "Host ordered": R(a) stamp < C(b) stamp.
 *   <st> B <call>                     the call's body begins: after its ENTER hook (and jitter),
 *                                     right before the function does its work.
 *   <st> D <call>                     the call's body is done: the FIRST thing cudasim_call_exit
 *                                     does, before the EXIT hook. What a tool with ENTER and EXIT
 *                                     callbacks can know of host order is body order: D(a) < B(b)
 *                                     whenever a's EXIT callback ran before b's ENTER callback.
 *   <st> S <stream> <ctx> <dev> <kind> <blocking>
 *                                     a stream comes to exist (kind: user|legacy|ptds; blocking 0|1;
 *                                     <stream> is the sim's never-reused stream id; <ctx> the ctx uid)
 *   <st> X <stream> <call>            the stream is destroyed by <call> (pending work still runs)
 *   <st> O <op> <call> <stream> <seq> <kind> [<access> ...]
 *                                     an operation enqueued by <call> (under the scheduler lock, in
 *                                     the same critical section that gives it <seq>, its 1-based
 *                                     position in <stream>). <op> is a unique op id.
 *                                     kind: kernel|copy|set|hostfn|record|wait|mark
 *                                     access: r:<addr>:<len> (reads) | w:<addr>:<len> (writes) |
 *                                     m:<addr>:<len> (may read and write: a kernel's pointer argument
 *                                     that falls inside an allocation; len = bytes from addr to the
 *                                     allocation's end)
 *   <st> E <op> <event>               <op> is a record of event <event> (the event's never-reused id)
 *   <st> W <op> <event>               <op> is a wait for event <event>'s most recent record
 *   <st> P <op> <stream> <seq>        an ACTUAL dependency the simulator gave <op> (event wait or the
 *                                     legacy stream's implicit rule), as resolved in this run. For
 *                                     debugging and cross-checking only: the reference recomputes
 *                                     what is GUARANTEED from the C/R/O/E/W lines.
 *   <st> H <call> <stream> <seq>      <call> made the host wait until <stream> completed <seq> (or
 *                                     found it complete): stream synchronize, a successful stream
 *                                     query, each stream of a context/device synchronize (its
 *                                     snapshot at the call's start), a synchronous copy's own op, the
 *                                     implicit waits of cuMemFree / cuMemFreeHost.
 *   <st> HE <call> <event>            <call> waited for (or found complete) event <event>'s most
 *                                     recent record: event synchronize, a successful event query.
 *   <st> M <addr> <len> <call>        memory allocated; <st> F <addr> <len> <call> memory freed.
 *   <st> N <call> <tid> <text...>     a note from the program (cudasim_trace_note(fmt, ...) in
 *                                     cudasim.h; <call> is 0). Text runs to the end of the line.
 *   <st> G <op> <exec> <node>         (graph launches) op <op> runs node <node> of graph exec <exec>.
 *
 * Per-stream order: within one stream, seq is the execution order (in-order stream).
 *
 * How the simulator meets it (details the spec leaves open):
 * - The stamp counter and the file belong to one trace mutex. Lines about stream work (S, X, O,
 *   E, W, P, G, H, HE, M, F) are written while the scheduler lock is held, in the critical
 *   section that makes the fact true; the trace mutex is then taken inside it. Lock order:
 *   scheduler lock, then trace mutex; nothing takes the scheduler lock while holding the trace
 *   mutex. C, R and N lines take only the trace mutex.
 * - <call> in O, X, H, HE, M and F lines is the innermost call in progress on the writing
 *   thread (a driver call made by a runtime call names the driver call); 0 outside any call
 *   (the per-thread stream of an exiting thread is destroyed by call 0).
 * - <tid> is the kernel thread id (gettid).
 * - O lines: an operation enqueued into a capturing stream becomes a graph node and gets no O
 *   line; its G lines come when a launch of the graph enqueues it. A wait for an event never
 *   recorded enqueues nothing (no O, no W line). Accesses with length 0 are left out. A set of
 *   32-bit words writes 4 bytes per word. Kinds: a host synchronize of the legacy stream
 *   enqueues a mark (carrying its implicit dependencies) and waits for it.
 * - P lines list every stream position the operation was made to wait for, including those
 *   already complete when it was enqueued (never position 0), right after its O (E, W, G) lines.
 * - H lines are written once the wait is over (or found over); none for position 0. HE lines
 *   are written in the critical section that reads the event's most recent record (before the
 *   wait, so the record named is exactly the one waited for); an event never recorded gets an
 *   HE line too (its wait is empty).
 * - G: <exec> is the executable graph's never-reused id (from 1), <node> the node's position in
 *   capture order (from 1). An external event wait node's op is a wait (with W and G lines).
 * - Event ids are never reused (from 1); stream ids are the cuStreamGetId ids.
 * - A forked child does not write to its parent's file: with %p in PATH it opens its own at its
 *   first line (stamps from 1 again), without it the child writes nothing.
 *
 * Everything here is hidden from the library's exports. */
#ifndef CUDASIM_TRACE_H
#define CUDASIM_TRACE_H

#include <stdatomic.h>
#include <stdint.h>

#include "sim.h"

#pragma GCC visibility push(hidden)

/* Non-zero when CUDASIM_TRACE was set when libcuda.so.1 was loaded (never changes afterwards). */
extern atomic_int dls_sim_trace_enabled;
/* The test every writer is behind: one predictable branch when tracing is off. */
#define SIM_TRACING() atomic_load_explicit(&dls_sim_trace_enabled, memory_order_relaxed)

/* Writes the C line of call `call` named `name` made by the calling thread and makes it the
 * thread's current call; returns the call it was made inside (0 for none). */
uint32_t dls_sim_trace_call_begin(uint32_t call, const char *name);
/* Makes `outer` (what dls_sim_trace_call_begin returned) current again and writes the R line of
 * `call`. */
void dls_sim_trace_call_end(uint32_t call, uint32_t outer);
/* Writes the B line (done 0) or the D line (done 1) of call `call`, the calling thread's current
 * call. */
void dls_sim_trace_body(uint32_t call, int done);
/* The innermost call in progress on the calling thread (0 outside calls; 0 when not tracing). */
uint32_t dls_sim_trace_call(void);
/* Writes one line: the next stamp, a space, then fmt's text and a newline. */
void dls_sim_trace_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A kernel's accesses (`m` ranges), looked up in the allocation table before op is enqueued:
 * call without the scheduler lock. Stores them in op. */
void dls_sim_trace_kernel_accesses(dls_sim_op *op);
/* Gives op its id and writes its O line on stream s, then its E / W and G lines. Needs the
 * scheduler lock (the critical section that gave op its seq). */
void dls_sim_trace_op_locked(dls_sim_op *op, const struct CUstream_st *s);

#pragma GCC visibility pop

#endif
