/* Versioned views of exported tensors: seberg's consumer-owned struct and leofang's wrapper of
 * an unversioned tensor. Both keep the producer's tensor in manager_ctx and release it once. */
#include "tensor.h"

#include <stdlib.h>

/* Deleter of a consumer-owned struct filled from a versioned tensor. */
static void into_deleter_versioned(DLManagedTensorVersioned *self)
{
    DLManagedTensorVersioned *mt = self->manager_ctx;
    self->manager_ctx = NULL;
    if (mt && mt->deleter)
        mt->deleter(mt);
}

/* Deleter of a consumer-owned struct filled from an unversioned tensor. */
static void into_deleter_unversioned(DLManagedTensorVersioned *self)
{
    DLManagedTensor *mt = self->manager_ctx;
    self->manager_ctx = NULL;
    if (mt && mt->deleter)
        mt->deleter(mt);
}

/* Deleter of a wrapper made by dls_api_wrap: releases the producer's tensor, then the wrapper. */
static void wrapper_deleter(DLManagedTensorVersioned *self)
{
    DLManagedTensor *mt = self->manager_ctx;
    if (mt && mt->deleter)
        mt->deleter(mt);
    free(self);
}

void dls_api_fill(DLManagedTensorVersioned *into, void *mt, int versioned)
{
    if (versioned) {
        const DLManagedTensorVersioned *v = mt;
        into->version = v->version;
        into->flags = v->flags;
        into->dl_tensor = v->dl_tensor;
        into->deleter = into_deleter_versioned;
    } else {
        const DLManagedTensor *u = mt;
        into->version.major = DLSYNC_DLPACK_MAJOR;
        into->version.minor = DLSYNC_DLPACK_MINOR;
        into->flags = 0;
        into->dl_tensor = u->dl_tensor;
        into->deleter = into_deleter_unversioned;
    }
    into->manager_ctx = mt;
}

int dls_api_wrap(DLManagedTensor *mt, DLManagedTensorVersioned **out)
{
    DLManagedTensorVersioned *w = malloc(sizeof *w);
    if (!w)
        return DLSYNC_ERR_MEMORY;
    dls_api_fill(w, mt, 0);
    w->deleter = wrapper_deleter;
    *out = w;
    return DLSYNC_OK;
}

void dls_api_release(void *mt, int versioned)
{
    if (versioned) {
        DLManagedTensorVersioned *v = mt;
        if (v->deleter)
            v->deleter(v);
    } else {
        DLManagedTensor *u = mt;
        if (u->deleter)
            u->deleter(u);
    }
}
