/* Registry of live exchanged tensors.
 *
 * Every DLPack tensor the shim sees at a wrapped export or import gets an exchange id (xid)
 * and an entry here until its deleter is called. The policy layer looks entries up by tensor
 * pointer; the pointer it keeps per exchange is the one its observer returns (policy_hooks.h),
 * stored here by the wrapper: the registry is written by the hooks alone.
 * The entries are a map keyed by tensor pointer (common/map.h) under a spin lock (common/spin.h:
 * each operation is one short critical section that calls nothing); lookups copy the entry out,
 * so the copy stays valid after the tensor is gone. Memory is allocated only when the table
 * grows (doubling), outside the lock. Thread-safe. */
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
    const void *tensor; /* DLManagedTensor* or DLManagedTensorVersioned*: the key, first */
    uint64_t xid;       /* exchange id, unique per process, from 1 */
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

/* What the wrapper knows of a tensor first seen at a wrapped entry point. */
typedef struct {
    const dls_profile *at; /* the entry point */
    const char *lib;       /* object defining it */
    void *tensor;          /* the managed tensor (or the DLTensor of a non-owning export) */
    dls_managed_view view; /* its parts */
    dls_extent extent;     /* the bytes it touches */
    int is_export;         /* 1: exported by `at`; 0: imported by it */
} dls_exchange_origin;

/* Fills *x, with a new xid, for the tensor described by o (registering nothing). */
void dls_exchange_make(dls_exchange *x, const dls_exchange_origin *o);

/* Registers the tensor described by o under a new xid, the entry dls_exchange_make would fill
 * (built in its slot), replacing an older entry for the same pointer, and copies it into *out
 * when out is non-NULL. Returns the xid, or 0 when memory for the table could not be found (the
 * tensor is then not tracked; *out is filled all the same). */
uint64_t dls_exchange_add(const dls_exchange_origin *o, dls_exchange *out);

/* Copies the live entry for `tensor` into *out (when out is non-NULL). Returns 0 or -1 (none). */
int dls_exchange_find_tensor(const void *tensor, dls_exchange *out);

/* The number of wrapped imports of the live `tensor` so far, or -1 when it is not live (nothing
 * is copied). */
long dls_exchange_imports(const void *tensor);

/* Records a wrapped import of the live `tensor` by `consumer` and copies the updated entry into
 * *out (when out is non-NULL). Returns 0 or -1 (not live). */
int dls_exchange_note_import(const void *tensor, const dls_profile *consumer, dls_exchange *out);

/* Stores `policy` as the policy layer's pointer of the live `tensor`: what the observer's
 * on_export or on_import returned for it (wrap.c). Returns 0 or -1 (not live). */
int dls_exchange_keep_policy(const void *tensor, void *policy);

/* Removes the live entry for `tensor`, copying it into *out and its producer's deleter into
 * *deleter (each when non-NULL: a caller that needs only the deleter copies 8 bytes, not the
 * entry). The id is remembered (for the last 256 removals) so a later release of the same
 * pointer can be named. Returns 0 or -1. */
int dls_exchange_remove(const void *tensor, dls_exchange *out, dls_deleter_fn *deleter);

/* The xid of the most recent removed entry for `tensor`, or 0 when none is remembered. */
uint64_t dls_exchange_removed_xid(const void *tensor);

/* Number of live entries. */
size_t dls_exchange_live(void);

/* Tests only: forget every entry and removal; ids keep counting. Not thread-safe. */
void dls_exchange_reset_for_tests(void);

#endif
