/* How the policy layer hears about exchanges.
 *
 * The hooks layer calls the installed observer at each export, import and release it sees,
 * after registering the exchange (see exchange.h) and outside any lock. With no observer the
 * shim only traces. Callbacks run on the thread that made the framework call, inside the
 * wrapper; they must not throw, must not call the wrapped framework functions, and must return
 * quickly. `x` points to a copy valid for the duration of the call. */
#ifndef DLS_POLICY_HOOKS_H
#define DLS_POLICY_HOOKS_H

#include "../common/export.h"

#include "exchange.h"

#include <stdatomic.h>

typedef struct {
    /* A wrapped export returned x->tensor (already registered, deleter already swapped). Returns
     * the pointer the registry keeps as the entry's `policy` (x->policy: the entry unchanged). */
    void *(*on_export)(void *ctx, const dls_exchange *x);
    /* A wrapped import is about to take x->tensor (called before the framework function).
     * Returns the pointer to keep, as on_export does. */
    void *(*on_import)(void *ctx, const dls_exchange *x);
    /* x->tensor's deleter was called: runs before the producer's deleter (the memory is still
     * the producer's and unchanged). x is no longer in the registry. */
    void (*on_release)(void *ctx, const dls_exchange *x);
    /* The shim's deleter was called again for a tensor already released; not passed on.
     * `xid` is 0 when the earlier release is no longer remembered. */
    void (*on_double_release)(void *ctx, const void *tensor, uint64_t xid);
    void *ctx;
} dls_exchange_observer;

/* Installs obs (NULL: none, trace only). obs must stay valid until it is replaced; any member
 * may be NULL. Safe to call at any time from any thread. */
void dls_exchange_set_observer(const dls_exchange_observer *obs);

/* The installed observer (written by dls_exchange_set_observer only). */
extern _Atomic(const dls_exchange_observer *) dls_exchange_observer_now DLS_HIDDEN;

/* The installed observer, or NULL. One inline load. */
static inline const dls_exchange_observer *dls_exchange_get_observer(void)
{
    return atomic_load_explicit(&dls_exchange_observer_now, memory_order_acquire);
}

#endif
