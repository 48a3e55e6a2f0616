/* CUPTI's entry points, resolved from the CUPTI library the observer loaded (cupti.def), the way
 * drv.h resolves libcuda's: one table of function pointers filled by one lookup per row. The
 * shim links no CUPTI; nothing here loads a library. */
#ifndef DLS_CUDA_CUPTI_H
#define DLS_CUDA_CUPTI_H

#include "../common/compiler.h"
#include "cuda_api.h"

/* The CUPTI entry points the observer uses, from cupti.def. Any pointer may be NULL when the
 * library lacks the entry point (an older CUPTI has no cuptiSubscribe_v2). */
typedef struct {
#define CUPTI(field, function, params) CUptiResult(CUPTIAPI *field) params;
#include "cupti.def"
#undef CUPTI
} dls_cupti_table;

/* Fills *t from `lib`, a handle dlopen returned for a CUPTI library (one lookup per row, with the
 * C library's dlsym: the shim's own dlsym hands out the CUPTI host's entries, cupti_host.h). */
void dls_cupti_resolve(void *lib, dls_cupti_table *t) DLS_UNLOCKED;

#endif
