/* Interpreting a DLTensor without trusting it: validity checks, the byte range it touches, and
 * printable names for its device and dtype.
 *
 * The shim reads tensors handed between frameworks it does not control. Before anything is
 * recorded or registered, the tensor is checked; a tensor that fails is reported and passed on
 * untouched. All arithmetic is overflow-checked; negative strides are allowed. */
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

/* The device types with a log name (dls_device_type_name), one bit each (all are below 32). */
#define DLS_KNOWN_DEVICES                                                                                          \
    ((1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 7) | (1u << 8) | (1u << 9) | (1u << 10) | (1u << 11) | \
     (1u << 12) | (1u << 13) | (1u << 14) | (1u << 15) | (1u << 16) | (1u << 17))

/* The element size in bits of t's dtype (at least 8 when sub-byte elements are padded). */
static inline int64_t dls_element_bits(const DLTensor *t, uint64_t flags)
{
    int64_t bits = (int64_t)t->dtype.bits * (int64_t)t->dtype.lanes;
    return (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) && bits > 0 && bits < 8 ? 8 : bits;
}

/* dls_tensor_check for any tensor (the inline test below takes the most common ones). */
const char *dls_tensor_check_any(const DLTensor *t, uint64_t flags, dls_extent *ext);

/* The inline part of dls_tensor_check: for the most common tensor (one to four dimensions, each
 * of 1 to 2^31 - 1 elements with a stride of 0 to 2^31 - 1 elements, so the last element's
 * offset is below 2^64, and below 2^38 elements in all (tested), so in bits, with elements of at
 * most 2^24 bits, it is below 2^62), fills *ext and returns 1 without a single overflow check;
 * returns 0 (*ext untouched) for any other tensor, which dls_tensor_check_any then takes. */
static inline int dls_tensor_check_common(const DLTensor *t, uint64_t flags, dls_extent *ext)
{
    if (t && (uint32_t)t->ndim - 1u < 4u && t->shape && t->strides && (uint32_t)t->device.device_type < 32 &&
        (DLS_KNOWN_DEVICES >> t->device.device_type & 1) && t->byte_offset < (1ull << 62)) {
        uint64_t end = 1, any = 0;
        for (int i = 0; i < t->ndim; i++) {
            uint64_t span = (uint64_t)t->shape[i] - 1, stride = (uint64_t)t->strides[i];
            any |= span | stride; /* a dimension of 0 or less, or a negative stride, sets bit 63 */
            end += span * stride;
        }
        uint64_t bits = (uint64_t)dls_element_bits(t, flags);
        int64_t hi = (int64_t)((end * bits + 7) >> 3) + (int64_t)t->byte_offset;
        uintptr_t abs_hi;
        if (bits && any < (1ull << 31) && end < (1ull << 38) &&
            !__builtin_add_overflow((uintptr_t)t->data, hi, &abs_hi)) {
            ext->lo = (int64_t)t->byte_offset;
            ext->hi = hi;
            return 1;
        }
    }
    return 0;
}

/* Checks that t can be interpreted (non-NULL, 0 <= ndim <= DLS_MAX_NDIM, shape present when
 * ndim > 0, no negative dimension, a non-zero element size, a known device type) and computes
 * its extent. `flags` is the 1.x flags word (0 for 0.x); IS_SUBBYTE_TYPE_PADDED makes each
 * sub-byte element take whole bytes. Returns NULL and fills *ext on success, otherwise a
 * constant string saying what is wrong (*ext untouched). Reads only the tensor's fields.
 * The most common tensor is measured inline (dls_tensor_check_common). */
static inline const char *dls_tensor_check(const DLTensor *t, uint64_t flags, dls_extent *ext)
{
    return dls_tensor_check_common(t, flags, ext) ? NULL : dls_tensor_check_any(t, flags, ext);
}

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
