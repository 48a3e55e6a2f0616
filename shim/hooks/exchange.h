/* Registry of live exchanged tensors.
 *
 * Every DLPack tensor the shim sees at a wrapped export or import gets an exchange id (xid)
 * and an entry here until its deleter is called. The policy layer looks entries up by tensor
 * pointer, and may attach its own per-exchange pointer.
 * Lookups copy the entry out under a spin lock (common/spin.h: each operation is one short
 * critical section that calls nothing), so the copy stays valid after the tensor is gone.
 * Memory is allocated only when the table grows (doubling), outside the lock. Thread-safe. */
#ifndef DLS_EXCHANGE_H
#define DLS_EXCHANGE_H

#include "../report/advice.h"
#include "dlsync_dlpack.h"
#include "extent.h"
#include "profiles.h"

#include <stddef.h>
#include <stdint.h>

typedef void (*dls_deleter_fn)(void *self);

typedef struct {
    uint64_t xid;       /* exchange id, unique per process, from 1 */
    const void *tensor; /* DLManagedTensor* or DLManagedTensorVersioned* */
    void *data;         /* dl_tensor.data */
    DLDevice device;
    DLDataType dtype;
    int versioned;               /* which of the two `tensor` is */
    uintptr_t lo, hi;            /* absolute byte range the tensor touches: [lo, hi) */
    uint64_t flags;              /* 1.x flags (0 for 0.x) */
    const dls_profile *producer; /* wrapped export it came from; NULL when made outside one */
    const char *producer_lib;    /* object defining that export; NULL when producer is NULL */
    const dls_profile *consumer; /* last wrapped import that took it; NULL until imported */
    const dls_profile *seen_at;  /* the first wrapped entry point that saw it */
    dls_xpath path;              /* how it was exchanged: the path of seen_at */
    unsigned imports;            /* wrapped imports of this tensor so far */
    dls_deleter_fn deleter;      /* the producer's own deleter, called by the shim's */
    void *policy;                /* opaque pointer owned by the policy layer; NULL initially */
} dls_exchange;

/* Next exchange id (never 0); counts one more exchange in the summary. */
uint64_t dls_exchange_next_id(void);

/* Adds x, keyed by x->tensor; an older entry for the same tensor pointer is replaced. Returns 0,
 * or -1 when memory for the table could not be found (x is then not tracked). */
int dls_exchange_add(const dls_exchange *x);

/* What the wrapper knows of a tensor first seen at a wrapped entry point. */
typedef struct {
    const dls_profile *at; /* the entry point */
    const char *lib;       /* object defining it */
    void *tensor;          /* the managed tensor */
    const dls_managed_view *view;
    const dls_extent *extent;
    int is_export; /* 1: exported by `at`; 0: imported by it */
} dls_exchange_origin;

/* Fills *x, with a new xid, for the tensor described by o. */
void dls_exchange_make(dls_exchange *x, const dls_exchange_origin *o);

/* Adds the entry dls_exchange_make would fill for o (built in its slot: not copied) and copies
 * it into *out when out is non-NULL. Returns its xid, or 0 when memory for the table could not
 * be found (the tensor is then not tracked and *out, when given, is filled all the same). */
uint64_t dls_exchange_add_made(const dls_exchange_origin *o, dls_exchange *out);

/* Registers the managed tensor mt just exported by row p (in lib), readable
 * (dls_managed_view_of accepted it) and touching [lo, hi) relative to its data, as the wrapper
 * does when nobody reads the entry (nothing is copied out): a tensor without a deleter is only
 * counted (nothing would release it); a live one whose deleter already is `deleter` is the same
 * exchange handed out again (nothing changes); any other gets an entry (replacing one for the
 * same pointer) and, once it has one, `deleter` in place of its own (which the entry keeps).
 * Returns the xid, or 0 when the tensor is not tracked. One critical section; the common path
 * calls nothing. */
uint64_t dls_exchange_add_export(const dls_profile *p, const char *lib, void *mt, int64_t lo, int64_t hi,
                                 dls_deleter_fn deleter);

/* Copies the live entry for `tensor` into *out (when out is non-NULL). Returns 0 or -1 (none). */
int dls_exchange_find_tensor(const void *tensor, dls_exchange *out);

/* The number of wrapped imports of the live `tensor` so far, or -1 when it is not live (nothing
 * is copied). */
long dls_exchange_imports(const void *tensor);

/* Records a wrapped import of the live `tensor` by `consumer` and copies the updated entry into
 * *out. Returns 0 or -1 (not live). */
int dls_exchange_note_import(const void *tensor, const dls_profile *consumer, dls_exchange *out);

/* Sets the policy layer's pointer of the live `tensor`. Returns 0 or -1 (not live). */
int dls_exchange_set_policy(const void *tensor, void *policy);

/* Removes the live entry for `tensor`, copying it into *out and its producer's deleter into
 * *deleter (each when non-NULL: a caller that needs only the deleter copies 8 bytes, not the
 * entry). The id is remembered (for the last 256 removals) so a later release of the same
 * pointer can be named. Returns 0 or -1. */
int dls_exchange_remove(const void *tensor, dls_exchange *out, dls_deleter_fn *deleter);

/* dls_exchange_remove(tensor, NULL, &deleter) for the shim's deleter when nobody reads the
 * entry: returns the producer's deleter of the removed live entry, or NULL when tensor is not
 * live (or its entry has none: a non-owning export's, which no deleter call concerns). The
 * common path calls nothing. */
dls_deleter_fn dls_exchange_remove_owned(const void *tensor);

/* The xid of the most recent removed entry for `tensor`, or 0 when none is remembered. */
uint64_t dls_exchange_removed_xid(const void *tensor);

/* Number of live entries. */
size_t dls_exchange_live(void);

/* Tests only: forget every entry and removal; ids keep counting. Not thread-safe. */
void dls_exchange_reset_for_tests(void);

#endif
