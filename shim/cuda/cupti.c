/* CUPTI's entry points (see cupti.h). */
#include "cupti.h"

#include "../hooks/libdl.h"

#include <string.h>

/* Each row's type is the CUPTI headers' own declaration of its function. */
#define CUPTI(field, function, params)                                                                  \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&function), CUptiResult(CUPTIAPI *) params), \
                   #function ": cupti.def's parameters differ from the CUPTI headers'");
#include "cupti.def"
#undef CUPTI

void dls_cupti_resolve(void *lib, dls_cupti_table *t)
{
    dls_dlsym_fn lookup = dls_real_dlsym_fn();
    memset(t, 0, sizeof *t);
    if (!lookup)
        return;
#define CUPTI(field, function, params) *(void **)&t->field = lookup(lib, #function);
#include "cupti.def"
#undef CUPTI
}
