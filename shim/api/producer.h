/* The public C API's producer exports (shim/include/dlsync.h): finding a framework's export and
 * calling it. Every function returns a dlsync_status. */
#ifndef DLS_API_PRODUCER_H
#define DLS_API_PRODUCER_H

#include "../hooks/profiles.h"
#include "dlsync.h"

/* A producer's export, found by framework or symbol name. */
typedef struct {
    const dls_profile *row;
    void *real; /* the framework's function */
    void *stub; /* the shim's wrapper of it (calling it records the export) */
} dls_api_producer;

/* Finds the export called `name` (see dlsync.h for the rules): NO_PRODUCER or UNSUPPORTED when
 * there is none that can be called. */
int dls_api_find_producer(const char *name, dls_api_producer *out);

/* Calls p's export on `object` (through the shim's wrapper when `wrapped`, so it is recorded and
 * announced like a program's call; the thread's consumer stream is cleared meanwhile) and
 * stores the tensor in *mt. PRODUCER when the export fails. */
int dls_api_export(const dls_api_producer *p, void *object, int wrapped, void **mt);

#endif
