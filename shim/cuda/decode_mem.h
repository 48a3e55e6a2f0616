/* The readers of memory operations: copy descriptors, batches, frees (decode.h). */
#ifndef DLS_CUDA_DECODE_MEM_H
#define DLS_CUDA_DECODE_MEM_H

#include "decode_common.h"

/* The bounding ranges of a 2D, 3D or 3D peer copy descriptor c (NULL:
 * conservative); a CUarray side gives no range. dls_cuda_decode_copy_nd picks the reader by c's
 * type. */
void dls_cuda_decode_copy_2d(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUDA_MEMCPY2D *c);
void dls_cuda_decode_copy_3d(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUDA_MEMCPY3D *c);
void dls_cuda_decode_copy_3d_peer(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUDA_MEMCPY3D_PEER *c);
#define dls_cuda_decode_copy_nd(op, scratch, c) \
    _Generic((c), const CUDA_MEMCPY2D *: dls_cuda_decode_copy_2d, const CUDA_MEMCPY3D *: dls_cuda_decode_copy_3d, \
             const CUDA_MEMCPY3D_PEER *: dls_cuda_decode_copy_3d_peer)(op, scratch, c)

/* The ranges of a batch of count linear copies (dsts, srcs, sizes: NULL makes it conservative). */
void dls_cuda_decode_batch(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                           const size_t *sizes, size_t count);

/* A free of the allocation at ptr: its whole range, asked of the driver at ENTER and remembered
 * for the EXIT of the same call on this thread (afterwards the driver no longer knows it); an
 * allocation the driver does not know is conservative, freeing NULL touches nothing. */
void dls_cuda_decode_free(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUpti_CallbackData *cb, uintptr_t ptr);

#endif
