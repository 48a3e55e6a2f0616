/* DLPack for dlsync: the system dlpack.h plus the DLPack 1.x declarations it may lack.
 *
 * Debian ships dlpack 0.6, which has DLTensor and DLManagedTensor but not the 1.x versioned
 * struct. This header declares DLPackVersion, DLManagedTensorVersioned and the 1.x flag bits
 * with exactly the layout of dlpack 1.x, so a tensor built by a 1.x framework can be read. When
 * the system header is 1.x itself (it defines DLPACK_MAJOR_VERSION), its definitions are used
 * and nothing is redeclared. */
#ifndef DLSYNC_DLPACK_H
#define DLSYNC_DLPACK_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifndef DLPACK_MAJOR_VERSION

#ifdef __cplusplus
extern "C" {
#endif

/* The DLPack ABI version a versioned tensor follows (1.x: major 1). */
typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

/* The tensor is read-only: the consumer must not write to it. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
/* The producer copied the data for this exchange. */
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
/* Sub-byte element types are padded to whole bytes per element. */
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/* DLPack 1.x managed tensor: version first, then owner context, deleter, flags, tensor. */
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_MAJOR_VERSION */

#endif
