/* Kernel argument words: the aligned pointer-sized words of a launch's arguments, so the policy
 * can tell which tracked byte ranges a kernel may touch.
 *
 * With `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE) the argument buffer itself is given and
 * is scanned whole. With `kernelParams` the layout comes from cuFuncGetParamInfo (or
 * cuKernelGetParamInfo for a CUkernel passed as a CUfunction), asked once per function and
 * cached in a lock-free table; a module or library unload drops every cached layout. When the
 * layout is unknown the launch is conservative. */
#ifndef DLS_CUDA_KPARAMS_H
#define DLS_CUDA_KPARAMS_H

#include "cuda_api.h"

#include <stdint.h>

/* Fills words[0..*n) with every 8-byte word of the launch's argument buffer that starts at an
 * 8-byte-aligned offset, in buffer order (at most `cap`). Returns 1 when that is every such word
 * of the arguments (exact), 0 when the layout is unknown or `cap` was too small (conservative). */
int dls_cuda_kernel_words(CUfunction f, void **kernel_params, void **extra, uint64_t *words, uint32_t cap, uint32_t *n);

/* Drops every cached layout (a module or library is being unloaded: its handles may be reused). */
void dls_cuda_kparams_invalidate(void);

#endif
