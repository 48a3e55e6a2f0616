/* Tensor checks, byte extents and names (see extent.h). */
#include "extent.h"

#include "../common/compiler.h"

#include "../report/json.h"

static const char *const g_device_names[] = {
    [1] = "cpu",           [2] = "cuda",    [3] = "cuda_host", [4] = "opencl",     [7] = "vulkan",
    [8] = "metal",         [9] = "vpi",     [10] = "rocm",     [11] = "rocm_host", [12] = "ext_dev",
    [13] = "cuda_managed", [14] = "oneapi", [15] = "webgpu",   [16] = "hexagon",   [17] = "maia",
};

const char *dls_device_type_name(int32_t type)
{
    if (type < 0 || (size_t)type >= sizeof g_device_names / sizeof *g_device_names)
        return NULL;
    return g_device_names[type];
}

/* Appends text s, then (when num >= 0) the decimal num, to buf[*k..n), keeping room for the NUL. */
static void append(char *buf, size_t n, size_t *k, const char *s, long num)
{
    char digits[20];
    size_t nd = num >= 0 ? (size_t)(dls_rec_utoa((uint64_t)num, digits) - digits) : 0;
    for (; *s && *k + 1 < n; s++)
        buf[(*k)++] = *s;
    for (size_t i = 0; i < nd && *k + 1 < n; i++)
        buf[(*k)++] = digits[i];
    buf[*k] = '\0';
}

/* The names of the common single-lane types, by code and log2(bits / 8). */
static const char *const g_common[6][5] = {
    {"int8", "int16", "int32", "int64", "int128"},
    {"uint8", "uint16", "uint32", "uint64", "uint128"},
    {"float8", "float16", "float32", "float64", "float128"},
    {NULL},
    {"bfloat8", "bfloat16", "bfloat32", "bfloat64", "bfloat128"},
    {"complex8", "complex16", "complex32", "complex64", "complex128"},
};

const char *dls_dtype_name(DLDataType dt, char *buf, size_t n)
{
    static const char *const base[] = {"int", "uint", "float", NULL, "bfloat", "complex"};
    const char *b = dt.code < sizeof base / sizeof *base ? base[dt.code] : NULL;
    unsigned log2 = (unsigned)__builtin_ctz(dt.bits | 256u) - 3;
    /* log2 wraps for bits with fewer than 3 trailing zeros: test it before shifting by it */
    if (b && dt.lanes == 1 && dt.bits >= 8 && log2 < 5 && dt.bits == 8u << log2)
        return g_common[dt.code][log2];
    size_t k = 0;
    if (!n)
        return buf;
    buf[0] = '\0';
    if (dt.code == 6 && dt.bits == 8) { /* kDLBool (1.x) */
        append(buf, n, &k, "bool", -1);
    } else if (b) {
        append(buf, n, &k, b, dt.bits);
    } else {
        append(buf, n, &k, "code(", dt.code);
        append(buf, n, &k, ")bits(", dt.bits);
        append(buf, n, &k, ")x(", dt.lanes);
        append(buf, n, &k, ")", -1);
        return buf;
    }
    if (dt.lanes != 1)
        append(buf, n, &k, "x", dt.lanes);
    return buf;
}

/* floor(a / 8) and ceil(a / 8) for any sign. */
static int64_t floor8(int64_t a)
{
    return a >= 0 ? a / 8 : -((-(a + 1)) / 8) - 1;
}

static int64_t ceil8(int64_t a)
{
    return -floor8(-a);
}

/* The element size in bits of t's dtype (at least 8 when sub-byte elements are padded). */
static int64_t element_bits(const DLTensor *t, uint64_t flags)
{
    int64_t bits = (int64_t)t->dtype.bits * (int64_t)t->dtype.lanes;
    return (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) && bits > 0 && bits < 8 ? 8 : bits;
}

/* The device types with a log name (dls_device_type_name), one bit each (all are below 32). */
#define KNOWN_DEVICES                                                                                              \
    ((1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 7) | (1u << 8) | (1u << 9) | (1u << 10) | (1u << 11) | \
     (1u << 12) | (1u << 13) | (1u << 14) | (1u << 15) | (1u << 16) | (1u << 17))

_Static_assert(sizeof g_device_names / sizeof *g_device_names == 18, "KNOWN_DEVICES lists g_device_names");

/* The extent of the most common tensor, with no overflow check: one to four dimensions, each of
 * 1 to 2^31 - 1 elements with a stride of 0 to 2^31 - 1 elements (so the last element's offset is
 * below 2^64), below 2^38 elements in all (tested, so in bits, with elements of at most 2^24 bits,
 * it is below 2^62). Fills *ext and returns 1 for such a tensor; returns 0 (*ext untouched) for
 * any other, which the general computation takes. */
static int common_extent(const DLTensor *t, uint64_t flags, dls_extent *ext)
{
    if (!t || (uint32_t)t->ndim - 1u >= 4u || !t->shape || !t->strides || (uint32_t)t->device.device_type >= 32 ||
        !(KNOWN_DEVICES >> t->device.device_type & 1) || t->byte_offset >= (1ull << 62))
        return 0;
    uint64_t end = 1, any = 0;
    for (int i = 0; i < t->ndim; i++) {
        uint64_t span = (uint64_t)t->shape[i] - 1, stride = (uint64_t)t->strides[i];
        any |= span | stride; /* a dimension of 0 or less, or a negative stride, sets bit 63 */
        end += span * stride;
    }
    uint64_t bits = (uint64_t)element_bits(t, flags);
    int64_t hi = (int64_t)((end * bits + 7) >> 3) + (int64_t)t->byte_offset;
    uintptr_t abs_hi;
    if (!bits || any >= (1ull << 31) || end >= (1ull << 38) || __builtin_add_overflow((uintptr_t)t->data, hi, &abs_hi))
        return 0;
    ext->lo = (int64_t)t->byte_offset;
    ext->hi = hi;
    return 1;
}

/* dls_tensor_check for any tensor: names what is wrong, or computes the extent (of an empty
 * tensor, negative strides and overflows included). Out of line: inlined into the common case it
 * costs each wrapped export+release 9 instructions more (make bench's hooks-export-release
 * figure, over its budget then). */
static DLS_NOINLINE const char *check_in_full(const DLTensor *t, uint64_t flags, dls_extent *ext)
{
    if (!t)
        return "NULL tensor";
    if (t->ndim < 0)
        return "negative ndim";
    if (t->ndim > DLS_MAX_NDIM)
        return "ndim larger than 256";
    if (t->ndim > 0 && !t->shape)
        return "NULL shape with ndim > 0";
    if (!dls_device_type_name(t->device.device_type))
        return "unknown device type";
    int64_t bits = element_bits(t, flags);
    if (bits == 0)
        return "zero-size element type";
    if (t->byte_offset > (uint64_t)INT64_MAX)
        return "byte_offset overflows";
    int64_t off = (int64_t)t->byte_offset;
    int empty = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return "negative dimension in shape";
        if (t->shape[i] == 0)
            empty = 1;
    }
    if (empty) {
        ext->lo = ext->hi = off;
        return NULL;
    }
    /* Element offsets reached: [minoff, maxoff]. */
    int64_t minoff = 0, maxoff = 0, implied = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        int64_t stride = t->strides ? t->strides[i] : implied;
        int64_t span;
        if (__builtin_mul_overflow(t->shape[i] - 1, stride, &span))
            return "extent overflows";
        if (span < 0 ? __builtin_add_overflow(minoff, span, &minoff) : __builtin_add_overflow(maxoff, span, &maxoff))
            return "extent overflows";
        if (!t->strides && __builtin_mul_overflow(implied, t->shape[i], &implied))
            return "extent overflows";
    }
    int64_t lo_bits, hi_bits, end;
    if (__builtin_mul_overflow(minoff, bits, &lo_bits) || __builtin_add_overflow(maxoff, 1, &end) ||
        __builtin_mul_overflow(end, bits, &hi_bits))
        return "extent overflows";
    int64_t lo = floor8(lo_bits), hi = ceil8(hi_bits);
    if (__builtin_add_overflow(lo, off, &lo) || __builtin_add_overflow(hi, off, &hi))
        return "extent overflows";
    uintptr_t base = (uintptr_t)t->data, abs_lo, abs_hi;
    if (__builtin_add_overflow(base, lo, &abs_lo) || __builtin_add_overflow(base, hi, &abs_hi))
        return "extent outside the address space";
    ext->lo = lo;
    ext->hi = hi;
    return NULL;
}

const char *dls_tensor_check(const DLTensor *t, uint64_t flags, dls_extent *ext)
{
    return common_extent(t, flags, ext) ? NULL : check_in_full(t, flags, ext);
}
