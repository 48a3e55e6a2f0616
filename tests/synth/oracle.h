/* oracle.h: the reference that judges a run of a generated program from the simulator's trace
 * (CUDASIM_TRACE, format in tests/cudasim/trace.h). It computes, for every operation, the
 * operations CUDA's rules GUARANTEE to be complete before it starts, given only what the host
 * ordered (whatever this run's timing was), and from the program's notes the conflicting pairs of
 * accesses to each exchanged tensor's memory, each guaranteed or not.
 *
 * # Rules (what "guaranteed" means)
 *
 * Host order. A point is an operation's enqueue (its O line), a host wait (H, HE), a note, or a
 * call's begin; each belongs to one thread. Point a is host-before point b when they are on the
 * same thread and a's stamp is smaller, or when the innermost call open at a returned before b's
 * thread began the innermost call open at b (R stamp < C stamp; for b a note, before the note;
 * a note's host access is over at its thread's next line):
 * the trace's R(d) < C(c), applied to the innermost calls, so a call made inside a hook of the same
 * thread (dlsync's injected record or wait in an ENTER callback) is before the outer call's own
 * operation when it returned first, and calls overlapping in time order nothing. A call a hook
 * made inside a program's call neither moves the begin of that call's points nor returns them
 * (test_oracle: a_hooks_own_call_does_not_move_the_begin, ..._does_not_return_the_programs_call).
 *
 * Two granularities (oracle_order). Call order (the above) is what the program itself ordered:
 * it judges the program, and check's reports. Body order reads "began" and "returned" as the
 * call's body beginning and ending (the trace's B and D lines, inside the ENTER and EXIT hooks):
 * the work of a call whose body ended before another's body began was truly enqueued first, in
 * this run, and a tool that learns it in its EXIT callback before the other's ENTER callback may
 * rely on it. It judges fix, whose waits are decided from what its callbacks saw.
 *
 * An operation o is guaranteed after (its guaranteed past, GP(o)):
 *  1. stream order: every operation on o's stream enqueued host-before o (operations of calls that
 *     overlap on a shared stream, the legacy stream of two threads say, are not ordered);
 *  2. the legacy stream: o on a context's legacy stream is after every operation on that context's
 *     blocking streams (user-created blocking and per-thread) enqueued host-before o, on streams
 *     still live at o for sure: destroyed never or host-after o (CUDA does not say whether the
 *     legacy stream waits for a destroyed stream's pending work); o on a blocking stream is after
 *     every operation on its context's legacy stream enqueued host-before o (non-blocking streams
 *     are exempt). The simulator's mark (a host synchronize of the legacy stream) is not an
 *     operation of the program: CUDA says the synchronize waits for the operations in the stream,
 *     so the mark is after the legacy stream's earlier operations only;
 *  3. an event wait (W): the candidates for the event's latest record at o's enqueue are the
 *     records host-before o that no other record host-before o follows in host order, and the
 *     records neither host-before nor host-after o; when no record is host-before o, "never
 *     recorded" is a candidate too and the wait guarantees nothing. o is after the intersection
 *     of the candidates' guaranteed pasts, each candidate included;
 *  4. host knowledge: what the host knew complete at o's enqueue: for every host wait host-before
 *     it, an H line's completion (the operations on its stream up to its position enqueued
 *     host-before the wait, with their pasts) and an HE line's (the intersection of rule 3 over
 *     the event's candidates at the wait). The H lines of a call that waits for a whole context
 *     (cuCtxSynchronize, a free's implicit wait, a primary context's reset, a kernel's lazy load)
 *     complete every stream the context had, destroyed ones included: the simulator lists only
 *     the streams it still holds, and a destroyed stream whose work is done is no longer held;
 *  5. transitivity: the guaranteed past of every operation in it.
 * A host access (a `hostread` note) is guaranteed after an operation when the operation is in the
 * host knowledge at the note; an operation is guaranteed after a host access when the note is
 * host-before it.
 *
 * # Notes (cudasim_trace_note): how a program tells the reference what it means
 *
 *   export <x> <addr> <len>   right after an export returned: exchange <x> (a label of the
 *                             program's, unique in the run) is the tensor over [addr, addr+len)
 *   release <x>               right before the consumer releases <x> (calls its deleter): the
 *                             deleter may give the memory back to a cache, from which another
 *                             thread may take it before the release call returns
 *   import <x>                right before the thread imports <x> (oracle_pair_after_import)
 *   hostread <x>              the thread reads <x>'s memory on the host right after the note
 *                             (before its next call)
 *   fill <x> | use <x>        the thread's latest operation that touches memory is <x>'s
 *                             producer write | a consumer use (labels for messages; checked to
 *                             touch <x>)
 * Other notes are ignored (programs may describe themselves).
 *
 * # Pairs of an exchange x (memory [addr, addr+len))
 *
 * The operations touching x's memory (trace accesses: r, w, and m for a kernel's pointer) fall in
 * three windows by their enqueue stamp: before the export (the producer's side, reduced to its
 * latest accesses: those in no other one's guaranteed past), between export and release (the
 * uses), and after the release until the next export of overlapping memory (the reuse, reduced to
 * its earliest accesses). Two accesses conflict when one may write (w or m). Pairs, named as
 * dlsync names its races (docs/log-format.md):
 *   write-read / write-write  producer side x use, and producer side x reuse (write-write when
 *                             the later one is a known write: a copy's or set's destination)
 *   host-read                 producer side (may write) x hostread
 *   release-reuse             use or hostread x reuse
 *   write-after-use / use-after-write / kernel-pair   two uses on different streams
 * A pair is guaranteed when the earlier side is in the later side's guaranteed past. */
#ifndef ORACLE_H
#define ORACLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct oracle oracle;

typedef enum {
    ORACLE_WRITE_READ,
    ORACLE_WRITE_WRITE,
    ORACLE_HOST_READ,
    ORACLE_RELEASE_REUSE,
    ORACLE_WRITE_AFTER_USE,
    ORACLE_USE_AFTER_WRITE,
    ORACLE_KERNEL_PAIR,
    ORACLE_KINDS
} oracle_kind;

/* One side of a pair: an operation (its index, in O-line order) or a host access (a hostread
 * note). */
typedef struct {
    int host;     /* 1: a host access */
    size_t index; /* operation index, or the note's index among the program's notes */
} oracle_side;

typedef struct {
    oracle_side a, b; /* a is the earlier side: b must be after it */
    oracle_kind kind;
    int guaranteed;
    size_t exchange; /* index of its exchange */
} oracle_pair;

typedef struct {
    const char *label;
    uint64_t addr, len;
    uint64_t export_stamp, release_stamp; /* release_stamp 0: never released */
    int tid;                              /* the exporting thread */
    size_t first_pair, npairs;            /* its pairs in oracle_pairs() */
    unsigned unguaranteed;                /* how many of them are not guaranteed */
    unsigned kinds;                       /* bit k: a pair of kind k is not guaranteed */
} oracle_exchange;

/* The granularity of host order (see "Host order" above). */
typedef enum { ORACLE_CALL_ORDER, ORACLE_BODY_ORDER } oracle_order;

/* Reads the trace at path and judges it with host order of the given granularity. Returns NULL
 * (and a reason in err[0..n)) when the file cannot be read, a line is malformed, a note names an
 * unknown exchange, or body order is asked of a trace without B and D lines. */
oracle *oracle_read(const char *path, oracle_order order, char *err, size_t n);

/* The same from the trace's text (NUL-terminated). */
oracle *oracle_parse(const char *text, oracle_order order, char *err, size_t n);

void oracle_free(oracle *o);

/* The kind's name as dlsync's race records spell it. */
const char *oracle_kind_name(oracle_kind k);

/* 1 when the operation with trace id `before` is in the guaranteed past of the one with trace id
 * `after`, 0 when not, -1 when either id is unknown. */
int oracle_guaranteed(const oracle *o, uint64_t before, uint64_t after);

/* 1 when the operation with trace id `op` is in the host knowledge at the note with the given
 * stamp (a hostread note, or any note), 0 when not, -1 when either is unknown. */
int oracle_host_knows(const oracle *o, uint64_t op, uint64_t note_stamp);

/* The exchanges, in export order; *n gets their count. */
const oracle_exchange *oracle_exchanges(const oracle *o, size_t *n);

/* The pairs of every exchange; *n gets their count. */
const oracle_pair *oracle_pairs(const oracle *o, size_t *n);

/* Writes a description of side s into buf (n bytes): "op <id> (<kind> on stream <id> <stream
 * kind>, seq <q>, thread <tid>, call <name>)" or "host read by thread <tid> at stamp <st>". */
void oracle_describe(const oracle *o, oracle_side s, char *buf, size_t n);

/* Whether side b actually started after side a completed in this run, as far as stream order and
 * the trace's P lines show (a dependency chain): 0 not ordered, 1 ordered, 2 ordered through an
 * operation of a legacy stream (its id in *legacy_op when not NULL), -1 a host side (not
 * shown). For messages and the tester's breakdown only: what is guaranteed is oracle_pairs'. */
int oracle_pair_actual(const oracle *o, const oracle_pair *p, uint64_t *legacy_op);

/* The same in words into buf (n bytes): "ordered in this run", "ordered in this run through
 * legacy-stream op N", "not ordered in this run (as far as P lines show)". */
void oracle_describe_actual(const oracle *o, const oracle_pair *p, char *buf, size_t n);

/* 1 when pair p is not guaranteed, but would be if a host wait's completion were known to every
 * thread from the moment the wait ended (its H line) rather than from its call's return: a wait
 * that ended while the later side's call was already under way. A tool that sees calls through
 * their ENTER and EXIT callbacks (dlsync) may rightly have seen that completion before the
 * later call's ENTER; the rules above, at call granularity, do not count it. For the tester's
 * breakdown: such a pair is still not guaranteed. */
int oracle_pair_window(const oracle *o, const oracle_pair *p);

/* 1 when pair p is a host read guaranteed, but not as of its thread's latest `import` note before
 * it: only host waits of other threads that returned after the import order it (its thread's own
 * waits up to the read still count). A tool that cannot see host loads (dlsync) can judge a host
 * read no later than the import: another thread's wait that returns afterwards may have returned
 * after the read, and only the program's timing says it did not. For the tester's breakdown:
 * such a pair is still guaranteed. */
int oracle_pair_after_import(const oracle *o, const oracle_pair *p);

/* Counts in the trace: operations, calls, passes the computation needed. */
typedef struct {
    size_t ops, calls, lines, passes;
} oracle_stats;
oracle_stats oracle_get_stats(const oracle *o);

#endif
