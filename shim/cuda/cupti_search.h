/* Where to look for libcupti: beside the CUDA libraries already loaded in the process, then by
 * soname. Pure path arithmetic plus one dl_iterate_phdr walk; nothing is loaded here. */
#ifndef DLS_CUDA_CUPTI_SEARCH_H
#define DLS_CUDA_CUPTI_SEARCH_H

#include "../common/compiler.h"
#include <stddef.h>

#define DLS_PATH_MAX 1024

/* Fills out[0..cap) with the CUPTI paths to try, in order, and returns how many. For each path
 * in loaded[0..n) (CUDA libraries: libcuda.so.1, libcudart.so.*), in its directory D:
 * D/libcupti.so.13, D/libcupti.so, D/../extras/CUPTI/lib64/libcupti.so.13 (toolkit layout);
 * then the bare sonames libcupti.so.13 and libcupti.so (the loader's search). Duplicates and
 * paths that do not fit are left out. */
size_t dls_cupti_candidates(const char *const *loaded, size_t n, char (*out)[DLS_PATH_MAX], size_t cap);

/* Fills out[0..cap) with the paths of the CUDA libraries loaded in this process (objects whose
 * file name starts with libcuda.so or libcudart.so), libcuda first; returns how many. */
size_t dls_cuda_loaded_libs(char (*out)[DLS_PATH_MAX], size_t cap) DLS_UNLOCKED;

#endif
