/* Interpreting a DLTensor without trusting it: validity checks, the byte range it touches, and
 * printable names for its device and dtype.
 *
 * The shim reads tensors handed between frameworks it does not control. Before anything is
 * recorded or registered, the tensor is checked; a tensor that fails is reported and passed on
 * untouched. No arithmetic can overflow (it is checked, or bounded by a test); negative strides
 * are allowed. */
#ifndef DLS_EXTENT_H
#define DLS_EXTENT_H

#include "dlsync_dlpack.h"

#include <stddef.h>
#include <stdint.h>

/* Largest ndim the shim interprets; a larger (or negative) ndim is malformed. */
#define DLS_MAX_NDIM 256

/* Byte range a tensor touches, relative to dl_tensor.data: [lo, hi), byte_offset included. lo
 * is negative when negative strides reach below data. An empty tensor has lo == hi. */
typedef struct {
    int64_t lo, hi;
} dls_extent;

/* Checks that t can be interpreted (non-NULL, 0 <= ndim <= DLS_MAX_NDIM, shape present when
 * ndim > 0, no negative dimension, a non-zero element size, a known device type) and computes
 * its extent. `flags` is the 1.x flags word (0 for 0.x); IS_SUBBYTE_TYPE_PADDED makes each
 * sub-byte element take whole bytes. Returns NULL and fills *ext on success, otherwise a
 * constant string saying what is wrong (*ext untouched). Reads only the tensor's fields. */
const char *dls_tensor_check(const DLTensor *t, uint64_t flags, dls_extent *ext);

/* Where the parts of a DLManagedTensor or DLManagedTensorVersioned are. */
typedef struct {
    DLTensor *tensor;    /* the dl_tensor member */
    void **deleter_slot; /* address of the deleter member (read and swapped by the shim) */
    uint64_t flags;      /* 1.x flags; 0 for 0.x */
    int versioned;
    uint32_t major, minor; /* 1.x version; 0, 0 for 0.x */
} dls_managed_view;

/* Fills *v for the managed tensor `mt` of the given kind. Returns NULL, or a constant reason
 * when mt cannot be read: NULL, or a versioned tensor whose major version is not 1. Inline. */
static inline const char *dls_managed_view_of(void *mt, int versioned, dls_managed_view *v)
{
    if (!mt)
        return "NULL tensor";
    if (versioned) {
        DLManagedTensorVersioned *m = mt;
        if (m->version.major != 1)
            return "unsupported DLPack major version";
        *v = (dls_managed_view){&m->dl_tensor, (void **)&m->deleter, m->flags, 1, m->version.major, m->version.minor};
    } else {
        DLManagedTensor *m = mt;
        *v = (dls_managed_view){&m->dl_tensor, (void **)&m->deleter, 0, 0, 0, 0};
    }
    return NULL;
}

/* Log name of a device type ("cpu", "cuda", ... as in docs/log-format.md), or NULL when the
 * type is unknown. */
const char *dls_device_type_name(int32_t type);

/* Writes the dtype's log name ("float32", "int64", "bool", "bfloat16", "complex64", with an
 * "xL" suffix for L > 1 lanes, or "code(C)bits(B)x(L)" for an unknown code): a constant string
 * for the common single-lane types, else written into buf (size n), which is returned. */
const char *dls_dtype_name(DLDataType dt, char *buf, size_t n);

#endif
