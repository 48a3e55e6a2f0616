/* What a race report holds: the race kinds (the vocabulary of the log and of suppressions), the
 * two sides, the tensor and why the sides are unordered. The record alone, with no function
 * behind it: race.h reports one, advice.h and suppress.h read one. */
#ifndef DLS_RACE_TYPES_H
#define DLS_RACE_TYPES_H

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

/* 1 when both sides of r are streams and on different devices (the report then names each
 * side's device, and how to order them across devices). Inline: a question about the record
 * alone, so advice.c asks it without calling into race.c. */
static inline int dls_race_across_devices(const dls_race *r)
{
    return !r->producer.stream.host && !r->consumer.stream.host &&
           r->producer.stream.device != r->consumer.stream.device;
}

#endif
