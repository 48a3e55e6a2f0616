/* check-mode race reports: formatting, deduplication, stderr text and the `race` log record.
 *
 * A report describes one unsynchronized use of an exchanged tensor: the tensor, the producer
 * side (framework, symbol, the last conflicting operation and its stream, the stack captured at
 * export), the consumer side (operation, stream, the stack of the thread that made the use),
 * why the two are unordered, and what to change (the fix line, advice.h). Reports with the same
 * key (exchange site, producer operation and stream kind, consumer operation and stream, hazard
 * kind) are one hazard: only the first
 * is printed and logged; later ones only raise its count (an occurrence in an exchange other than
 * the hazard's latest adds a short `race_again` log record naming it), and hazards seen more than
 * once get one "seen N times" line on stderr at exit. A hazard a suppression rule matches (suppress.h) is
 * not printed: it is logged with the rule and counted as suppressed. Thread-safe (one lock around the table; the text
 * is written with one write(2) outside it). */
#ifndef DLS_RACE_H
#define DLS_RACE_H

#include "advice.h"
#include "stack.h"

#include <stddef.h>
#include <stdint.h>

/* X(enum suffix, name in the log and in suppressions), in dls_race_kind order. */
#define DLS_RACE_KINDS(X)                                                                                            \
    X(WRITE_READ, "write-read")           /* consumer reads what a pending producer op writes */                     \
    X(READ_WRITE, "read-write")           /* consumer writes what a pending producer op reads */                     \
    X(WRITE_WRITE, "write-write")         /* both write */                                                           \
    X(HOST_READ, "host-read")             /* host-visible tensor imported while producer work on it is pending */    \
    X(RELEASE_REUSE, "release-reuse")     /* memory written after release while the consumer's work still uses it */ \
    X(WRITE_AFTER_USE, "write-after-use") /* a stream writes a live tensor while another's later use is pending */   \
    X(USE_AFTER_WRITE,                                                                                               \
      "use-after-write") /* a stream touches a live tensor while another's in-place write is pending */              \
    X(USE_AFTER_RELEASE,                                                                                             \
      "use-after-release") /* the memory is reused while an access made after the release is pending */              \
    X(KERNEL_PAIR,                                                                                                   \
      "kernel-pair") /* kernels (neither known to write) unordered after the handover: listed on request */          \
    X(FREE_DURING_USE, "free-during-use") /* a synchronous free while another device's use is pending */

typedef enum {
#define DLS_RACE_ENUM_(id, name) DLS_RACE_##id,
    DLS_RACE_KINDS(DLS_RACE_ENUM_)
#undef DLS_RACE_ENUM_
        DLS_RACE_N_
} dls_race_kind;

/* A stream as reports name it. */
typedef struct {
    uint64_t id;
    uintptr_t handle;
    const char *kind; /* "legacy", "per-thread", "blocking", "non-blocking", "unknown" */
    int device;
    int host; /* 1: the side is the host itself (no stream) */
} dls_race_stream;

typedef struct {
    const char *op; /* kernel name, or the API of a copy/set ("cudaMemcpyAsync"); NULL = unknown */
    dls_race_stream stream;
    const dls_stack *stack; /* NULL: capture the calling thread's stack when the report is new */
} dls_race_side;

typedef struct dls_race {
    dls_race_kind kind;
    dls_xpath path; /* how the tensor was exchanged: selects the fix line */
    uint64_t xid;
    const char *framework, *symbol; /* producer (or first wrapped entry point) of the tensor */
    const char *device;             /* device type name ("cuda", "cpu", ...) */
    int device_id;
    const char *dtype; /* dtype name */
    int ndim;
    const int64_t *shape;
    uintptr_t data;   /* dl_tensor.data */
    uintptr_t lo, hi; /* absolute byte range */
    dls_race_side producer, consumer;
    const char *why;
} dls_race;

/* Stable name of a kind as written in the log ("write-read", ...). */
const char *dls_race_kind_name(dls_race_kind k);

/* 1 when both sides of r are streams and on different devices (the report then names each
 * side's device, and how to order them across devices). Inline: a question about the record
 * alone, so advice.c asks it without calling into race.c. */
static inline int dls_race_across_devices(const dls_race *r)
{
    return !r->producer.stream.host && !r->consumer.stream.host &&
           r->producer.stream.device != r->consumer.stream.device;
}

/* The deduplication key of r. */
uint64_t dls_race_key(const dls_race *r);

/* Reports r: the first time its key is seen, writes the report on stderr and the `race` record
 * in the log and counts one race in the summary, or, when a suppression rule matches it, only
 * the `race` record (with the rule) and one suppressed race, or, for a kernel-pair race while
 * DLSYNC_KERNEL_PAIRS is not 1, only one more in the summary's kernel_pairs; afterwards only
 * counts. When the
 * consumer is the calling thread and it released the GIL, the report is written when the thread
 * takes the GIL back, with its Python frames, or at exit. Returns the number of
 * times the key has been seen, this one included (0 when the table is full and the report was
 * printed without deduplication). */
unsigned dls_race_report(const dls_race *r);

/* A report as written, for the query API (dlsync.h: dlsync_race). The strings stay valid for the
 * life of the process; a stack is its frames, one per line, innermost first. */
typedef struct {
    uint64_t key, xid;
    const char *kind, *framework, *symbol, *producer_op, *consumer_op, *fix;
    const char *producer_stack, *consumer_stack;
    const char *text; /* the report exactly as written on stderr */
} dls_race_entry;

/* Number of reports written so far (at most 256 are kept). */
size_t dls_race_entries(void);

/* Copies the i-th report written (from 0) into *out and the times its hazard was seen so far
 * into *count. Returns 0, or -1 when there is no such report. */
int dls_race_entry_get(size_t i, dls_race_entry *out, unsigned *count);

/* Number of distinct hazards reported so far. */
size_t dls_race_distinct(void);

/* Tests only: forget every report. */
void dls_race_reset_for_tests(void);

/* Writes one "seen N times" line on stderr for each hazard reported more than once (at exit,
 * by the shim's start-up file). */
void dls_race_emit_repeats(void);

#endif
