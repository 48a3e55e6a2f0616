/* The table of the operation kinds' traits (see kinds.h), built from kinds.def. */
#include "kinds.h"

#define KIND(name, memory, entered, deferred, host_sync, waits, nothing, forgets, errors)                           \
    [DLS_OP_##name] = {DLS_POL_##entered,      DLS_POL_##deferred,     DLS_POL_##host_sync,  DLS_POL_WAITS_##waits, \
                       (unsigned char)nothing, (unsigned char)forgets, (unsigned char)errors},
const dls_pol_kind_traits dls_pol_kinds[DLS_OP_KIND_COUNT] = {
#include "kinds.def"
};
#undef KIND

/* Every kind has its row: as many rows as kinds, and no kind twice (a row that sets a kind again
 * fails the build: -Woverride-init). */
enum {
    ROWS = 0
#define KIND(...) +1
#include "kinds.def"
#undef KIND
};
_Static_assert((int)ROWS == (int)DLS_OP_KIND_COUNT, "kinds.def: one row per dls_op_kind");

/* A kind that makes the host wait says for what, and no other does. */
#define KIND(name, memory, entered, deferred, host_sync, waits, nothing, forgets, errors)                   \
    _Static_assert((DLS_POL_##host_sync == DLS_POL_NEVER) == (DLS_POL_WAITS_##waits == DLS_POL_WAITS_NONE), \
                   "kinds.def: " #name " waits for something exactly when it is a host synchronize");
#include "kinds.def"
#undef KIND
