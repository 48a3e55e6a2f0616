/* libFuzzer harness: validation of untrusted DLTensors (shim/hooks/extent.c). The input is the
 * tensor's fields followed by its shape and strides: ndim (int32), flags (uint64), dtype,
 * device, byte_offset, whether strides are given, then int64 values. Properties: no crash and
 * no undefined behaviour (UBSan: overflow) for any field values; an accepted tensor has
 * lo <= hi; names are always produced. */
#include "hooks/extent.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Reads the next `size` bytes of the input into out (zeros past its end). */
static void take(const uint8_t **p, size_t *n, void *out, size_t size)
{
    size_t k = *n < size ? *n : size;
    memset(out, 0, size);
    memcpy(out, *p, k);
    *p += k;
    *n -= k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    DLTensor t;
    memset(&t, 0, sizeof t);
    uint64_t flags, offset;
    uint8_t with_strides, null_shape;
    take(&data, &n, &t.ndim, sizeof t.ndim);
    take(&data, &n, &flags, sizeof flags);
    take(&data, &n, &t.dtype, sizeof t.dtype);
    take(&data, &n, &t.device, sizeof t.device);
    take(&data, &n, &offset, sizeof offset);
    take(&data, &n, &with_strides, 1);
    take(&data, &n, &null_shape, 1);
    t.byte_offset = offset;
    t.data = (void *)(uintptr_t)0x10000;
    /* shape and strides hold every entry ndim claims (up to a bound past DLS_MAX_NDIM) */
    size_t dims = t.ndim > 0 ? (size_t)t.ndim : 0;
    if (dims > DLS_MAX_NDIM + 8)
        dims = DLS_MAX_NDIM + 8;
    int64_t *shape = calloc(dims + 1, sizeof *shape), *strides = calloc(dims + 1, sizeof *strides);
    if (!shape || !strides)
        abort();
    take(&data, &n, shape, dims * sizeof *shape);
    take(&data, &n, strides, dims * sizeof *strides);
    t.shape = null_shape & 1 ? NULL : shape;
    t.strides = with_strides & 1 ? strides : NULL;
    dls_extent ext;
    if (!dls_tensor_check(&t, flags, &ext) && ext.lo > ext.hi)
        abort();
    char name[64];
    if (!dls_dtype_name(t.dtype, name, sizeof name))
        abort();
    dls_device_type_name(t.device.device_type);
    free(shape);
    free(strides);
    return 0;
}
