/* The frontier of an exchange at its export: which pending work of which stream may have written
 * it. Lock held. */
#ifndef DLS_POL_ATTRIBUTE_H
#define DLS_POL_ATTRIBUTE_H

#include "types.h"

/* Fills x's frontier (x->front): for every stream whose pending history entries may touch
 * [alo, hi) (launch words from the start of the allocation holding x, copies and sets by their
 * exact ranges), the position of its latest touching entry, not the stream's latest position,
 * so an unrelated later operation or a busy unrelated stream never makes a correct program look
 * racy; and x's producer streams (x->prod, dls_pol_x_produced_on). */
void dls_pol_attribute(dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

#endif
