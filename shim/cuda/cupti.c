/* CUPTI's entry points (see cupti.h). */
#include "cupti.h"

#include <dlfcn.h>

/* Each row's type is the CUPTI headers' own declaration of its function. */
#define CUPTI(field, function, params)                                                                  \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&function), CUptiResult(CUPTIAPI *) params), \
                   #function ": cupti.def's parameters differ from the CUPTI headers'");
#include "cupti.def"
#undef CUPTI

void dls_cupti_resolve(void *lib, dls_cupti_table *t)
{
#define CUPTI(field, function, params) *(void **)&t->field = dlsym(lib, #function);
#include "cupti.def"
#undef CUPTI
}
