/* Race reports waiting for their consumer's Python frames.
 *
 * A report whose consumer thread released the GIL (a ctypes.CDLL call, a framework operator)
 * gets its Python frames when that thread takes the GIL back (pyframes.h). Until then race.c
 * parks it here, with copies of everything it points to, and takes it back to write it: when the
 * thread's frames arrive, or at exit. At most 16 wait. Thread-safe (one lock around the queue;
 * pyframes' lock is taken under it). */
#ifndef DLS_RACE_WAIT_H
#define DLS_RACE_WAIT_H

#include "race_types.h"
#include "stack.h"

#include <stdint.h>

/* A parked report: r, whose strings and shape point into the copies beside it. */
typedef struct {
    uint64_t key;
    dls_race r;
    char dtype[48], why[320], pop[160], cop[160];
    int64_t shape[16];
    dls_stack pstack, cstack;
} dls_race_waiting;

/* Parks the report r with key `key` and the sides' stacks ps and cs, for the calling thread.
 * Returns 1, or 0 when the queue is full (nothing is parked). */
int dls_race_wait(const dls_race *r, uint64_t key, const dls_stack *ps, const dls_stack *cs);

/* Takes one parked report out into *out: one of the calling thread's whose Python frames have
 * come (`all` 0), or any (`all` 1). Returns 1, or 0 when there is none. */
int dls_race_wait_take(int all, dls_race_waiting *out);

#endif
