/* What happens at a wrapped export, import and release.
 *
 * The trampoline's pre- and post-hooks (trampoline.h) land here. Each export, import and release
 * takes one pass down: the wrapper asks once who listens (the log, the policy's observer, an
 * NVTX tool), checks the tensor (extent.h), registers, notes or removes it in the registry
 * (exchange.h: one critical section, the entry copied out only when somebody listens), then tells
 * the observer (policy_hooks.h) and writes the record (record.h). At an export the tensor gets
 * the shim's deleter (the producer's is kept and called by it); at an import the same happens
 * before the framework function runs, and a tensor exported through a wrapped export keeps its
 * exchange id. A wrapped call made while another wrapped call is running on the same thread (a
 * framework calling its own entry points) is passed straight through, so each exchange is
 * recorded once. Malformed tensors are logged and passed on untouched. With DLSYNC_MODE=off
 * every wrapper jumps straight to the real function. */
#ifndef DLS_WRAP_H
#define DLS_WRAP_H

#include "extent.h"
#include "profiles.h"

/* The deleter the shim puts into every exchanged tensor: reports the release, then calls the
 * producer's deleter once; a second call for the same tensor is reported as a double release
 * and not passed on. */
void dls_exchange_deleter(void *mt);

/* Handles a tensor handed out by export row p (real function in lib), as the post-hook does. */
void dls_wrap_export(const dls_profile *p, const char *lib, void *mt);

/* Handles the caller-owned DLTensor t that export row p (a fill:N row) just filled: a non-owning
 * export, logged and announced. It has no deleter: it is registered under t and retired (the
 * observer hears a release; nothing is logged) when t is filled again or when 256 later ones
 * are live (a view is valid only until the consumer's call returns). */
void dls_wrap_export_filled(const dls_profile *p, const char *lib, DLTensor *t);

/* Handles a tensor about to be taken by import row p, as the pre-hook does. */
void dls_wrap_import(const dls_profile *p, const char *lib, void *mt);

/* For entry points wrapped without a trampoline (the DLPack C exchange API): marks the calling
 * thread as inside a wrapped call, so that the wrapped calls the real function makes (a
 * framework's own to_dlpack behind its table) pass straight through and the exchange is recorded
 * once, by the caller. Returns 0, marking nothing, when the thread is already inside one or the
 * mode is off: the call is then nested and passes straight through itself. */
int dls_wrap_enter(void);

/* Ends what a dls_wrap_enter that returned 1 began. */
void dls_wrap_leave(void);

/* What the deleter calls first, before it removes a tensor from the registry (NULL: nothing; the
 * capsule layer registers its own once some libpython is hooked, so wrap.c calls nothing above
 * it). Any thread; the last registration wins. */
typedef void (*dls_wrap_before_release_fn)(void *mt);
void dls_wrap_set_before_release(dls_wrap_before_release_fn fn);

#endif
