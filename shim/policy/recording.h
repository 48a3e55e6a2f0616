/* Records of user events in flight. A wait on an event, or a host synchronize of it, that a
 * record of the same event on another thread may precede in the driver (its ENTER came, its EXIT
 * is not queued yet: a queued one is applied before anything that asks) cannot know which record
 * it waits for: it is ordered after none (hb.h, "Host order"). */
#ifndef DLS_POL_RECORDING_H
#define DLS_POL_RECORDING_H

#include "types.h"

#include <stdint.h>

/* At the ENTER of a record of `event` by the calling thread (no lock needed). */
void dls_pol_recording_begin(uint64_t event);

/* Once the calling thread's record is queued (or failed). */
void dls_pol_recording_end(void);

/* 1 when another thread may be recording `event` now. No lock needed: a record it finds ended
 * was queued before any claim the caller makes after asking. */
int dls_pol_recording_other(uint64_t event);

#endif
