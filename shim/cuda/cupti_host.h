/* Hosting the program's own CUPTI clients on dlsync's subscription.
 *
 * Where CUPTI allows one subscriber (before 13.3, or a driver older than r610), or where the
 * process's mode makes CUPTI refuse a client (cuptiSubscribe after dlsync's cuptiSubscribe_v2),
 * dlsync's subscription would leave a client inside the program without callbacks: Kineto
 * (torch.profiler) warns "CUPTI initialization failed" and records no CUDA activity. The host
 * gives such a client a subscription of its own, carried by dlsync's:
 *
 * - The program's calls of cuptiSubscribe, cuptiSubscribe_v2, cuptiUnsubscribe,
 *   cuptiEnableCallback, cuptiEnableDomain, cuptiEnableAllDomains, cuptiGetCallbackState and
 *   cuptiFinalize reach the host through the binding engine (hooks/engine.h: the callers' GOT slots,
 *   and dlsym of those names, which is how a client that dlopens CUPTI finds them). The CUPTI
 *   library's own references to them are left alone. Every other CUPTI function (the activity
 *   API included) is not hooked, and passes straight through.
 * - A subscription goes to CUPTI first. Only when CUPTI refuses it with
 *   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED while dlsync's subscription is live, in the same
 *   CUPTI library, is it hosted (up to DLS_CUPTI_HOST_CLIENTS at a time; past that the refusal
 *   stands): the client gets CUPTI_SUCCESS and a handle of the host's.
 * - On a hosted handle the enable calls, cuptiGetCallbackState and cuptiUnsubscribe act on the
 *   client's own enable state, and dlsync's subscription enables in CUPTI exactly the ids that
 *   dlsync or some client wants (an id nobody wants any more is disabled again). Other handles
 *   go to CUPTI.
 * - dlsync's subscription calls dls_cupti_host_dispatch: it runs dlsync's own callback for the
 *   ids dlsync enabled only, and each client's callback, with its own userdata, for the ids that
 *   client enabled. A client's CUpti_CallbackData is a copy whose correlationData is the client's
 *   own (kept per thread from ENTER to the EXIT of the same call), as CUPTI gives each subscriber.
 *   Until a client is hosted the dispatcher only forwards to dlsync's callback.
 * - cuptiFinalize while dlsync's subscription is live ends the hosted subscriptions and returns
 *   CUPTI_SUCCESS without detaching CUPTI, so dlsync keeps observing (what the client's activity
 *   API did is left as the client left it); otherwise it goes to CUPTI.
 * No lock is taken: slots are claimed and enable counts kept with atomics, and CUPTI is called
 * with nothing held. */
#ifndef DLS_CUDA_CUPTI_HOST_H
#define DLS_CUDA_CUPTI_HOST_H

#include "../hooks/engine.h"
#include "cuda_api.h"
#include "cupti.h"

#include <stddef.h>

#define DLS_CUPTI_HOST_CLIENTS 4

/* The callback dlsync's subscription is made with (see above). userdata unused. */
void CUPTIAPI dls_cupti_host_dispatch(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                      const void *cbdata);

/* Records that dlsync itself enables (domain, cbid), before the observer enables it. */
void dls_cupti_host_own(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

/* dlsync's subscription `sub`, made through the CUPTI table `t` (which stays valid), is live and
 * its own ids are enabled: clients may be hosted from now on. Called once, by the observer. */
void dls_cupti_host_start(const dls_cupti_table *t, CUpti_SubscriberHandle sub);

/* The host's hooks for the binding engine; *n gets their number, 0 when dlsync will not subscribe
 * in this configuration (DLSYNC_MODE=off, or trace without DLSYNC_DEBUG_OPS). Start-up registers
 * them (dls_engine_add_hooks). */
const dls_engine_hook *dls_cupti_host_hooks(size_t *n);

#endif
