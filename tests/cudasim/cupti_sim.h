/* cupti_sim.h: the seam between the simulated libcupti.so.13's two files (not for tests):
 * cupti_callbacks.c (subscriptions and callbacks) and cupti_activity.c (the activity API). */
#ifndef CUPTI_SIM_H
#define CUPTI_SIM_H

#include <cupti_callbacks.h>
#include <stdatomic.h>

/* Installs libcupti's hook into the simulated driver (idempotent): every API call is reported to
 * it from then on. */
void cudasim_cupti_install_hook(void);

/* The activity kinds enabled (a bit each, cupti_activity.c): the hook asks
 * cudasim_cupti_activity_note only while one is, as a driver's dispatch costs nothing for them. */
extern atomic_uint cudasim_cupti_activity_kinds;

/* Called by the hook with every report (domain, and its CUpti_CallbackData or CUpti_ResourceData)
 * while a kind is enabled: appends the activity records the enabled kinds ask for. */
void cudasim_cupti_activity_note(CUpti_CallbackDomain domain, const void *cbdata);

/* cuptiFinalize's part in the activity API: disables every kind, forgets the buffer callbacks and
 * drops the records not flushed yet. */
void cudasim_cupti_activity_finalize(void);

#endif
