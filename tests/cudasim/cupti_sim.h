/* cupti_sim.h: the seam between the simulated libcupti.so.13's two files (not for tests):
 * cupti_callbacks.c (subscriptions and callbacks) and cupti_activity.c (the activity API). */
#ifndef CUPTI_SIM_H
#define CUPTI_SIM_H

#include <cupti_callbacks.h>

/* Installs libcupti's hook into the simulated driver (idempotent): every API call is reported to
 * it from then on. */
void cudasim_cupti_install_hook(void);

/* Called by the hook with every report (domain, and its CUpti_CallbackData or CUpti_ResourceData):
 * appends the activity records the enabled kinds ask for. Returns at once when none is enabled. */
void cudasim_cupti_activity_note(CUpti_CallbackDomain domain, const void *cbdata);

/* cuptiFinalize's part in the activity API: disables every kind, forgets the buffer callbacks and
 * drops the records not flushed yet. */
void cudasim_cupti_activity_finalize(void);

#endif
