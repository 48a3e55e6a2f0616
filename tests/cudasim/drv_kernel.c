/* drv_kernel.c: simulated kernels: host functions registered with a parameter layout.
 *
 * Models: the CUfunction / CUkernel handle of a kernel, its name (reported as symbolName of
 * launches), its parameter offsets and sizes (cuFuncGetParamInfo, cuKernelGetParamInfo), and a
 * per-kernel simulated duration, and lazy module loading (CUDA_MODULE_LOADING=LAZY: the first
 * launch of a kernel in a context waits for the context's earlier work). Does not model: modules,
 * libraries, function attributes; loading is eager unless CUDA_MODULE_LOADING=LAZY (real CUDA 13
 * defaults to lazy). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cudasim.h"
#include "sim.h"

static struct CUfunc_st *g_kernels; /* guarded by the scheduler lock */

static size_t align_of(size_t size)
{
    return size == 1 || size == 2 || size == 4 ? size : 8;
}

CUfunction cudasim_register_kernel(const char *name, cudasim_kernel_fn fn, unsigned nparams, const size_t *param_sizes)
{
    if (!name || !fn || (nparams && !param_sizes))
        return NULL;
    for (unsigned i = 0; i < nparams; i++)
        if (!param_sizes[i])
            return NULL;
    struct CUfunc_st *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->name = strdup(name);
    k->sizes = calloc(nparams ? nparams : 1, sizeof(size_t));
    k->offsets = calloc(nparams ? nparams : 1, sizeof(size_t));
    if (!k->name || !k->sizes || !k->offsets) {
        free(k->name);
        free(k->sizes);
        free(k->offsets);
        free(k);
        return NULL;
    }
    k->magic = SIM_MAGIC_FUNC;
    k->fn = fn;
    k->nparams = nparams;
    size_t off = 0;
    for (unsigned i = 0; i < nparams; i++) {
        size_t a = align_of(param_sizes[i]);
        off = (off + a - 1) / a * a;
        k->offsets[i] = off;
        k->sizes[i] = param_sizes[i];
        off += param_sizes[i];
    }
    k->argbytes = off;
    dls_sim_lock();
    k->next = g_kernels;
    g_kernels = k;
    dls_sim_unlock();
    return k;
}

int cudasim_set_kernel_duration(const char *name, unsigned usec)
{
    int found = -1;
    dls_sim_lock();
    for (struct CUfunc_st *k = g_kernels; k; k = k->next) {
        if (name && strcmp(k->name, name) == 0) {
            k->duration_us = usec;
            found = 0;
        }
    }
    dls_sim_unlock();
    return found;
}

struct CUfunc_st *dls_sim_kernel(CUfunction f)
{
    return f && f->magic == SIM_MAGIC_FUNC ? f : NULL;
}

const char *cudasim_kernel_name(CUfunction f)
{
    struct CUfunc_st *k = dls_sim_kernel(f);
    return k ? k->name : NULL;
}

static CUresult param_info(CUfunction f, size_t index, size_t *offset, size_t *size)
{
    struct CUfunc_st *k = dls_sim_kernel(f);
    if (!k)
        return CUDA_ERROR_INVALID_HANDLE;
    if (index >= k->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    if (offset)
        *offset = k->offsets[index];
    if (size)
        *size = k->sizes[index];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    cuFuncGetParamInfo_params p = {func, paramIndex, paramOffset, paramSize};
    DRV_CALL(cuFuncGetParamInfo, &p, NULL, param_info(func, paramIndex, paramOffset, paramSize));
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    cuKernelGetParamInfo_params p = {kernel, paramIndex, paramOffset, paramSize};
    DRV_CALL(cuKernelGetParamInfo, &p, NULL,
             param_info((CUfunction)(void *)kernel, paramIndex, paramOffset, paramSize));
}

const dls_sim_proc dls_sim_procs_kernel[] = {
    SIM_PROC(cuFuncGetParamInfo),
    SIM_PROC(cuKernelGetParamInfo),
    {NULL, NULL},
};

/* A context a kernel was loaded into. */
struct dls_sim_loaded {
    struct CUctx_st *ctx;
    struct dls_sim_loaded *next;
};

static int g_lazy;
static pthread_once_t g_lazy_once = PTHREAD_ONCE_INIT;

static void read_lazy(void)
{
    const char *v = getenv("CUDA_MODULE_LOADING");
    g_lazy = v && strcmp(v, "LAZY") == 0;
}

/* 1 under CUDA_MODULE_LOADING=LAZY (read once; launching threads may ask at the same time). */
static int lazy_loading(void)
{
    pthread_once(&g_lazy_once, read_lazy);
    return g_lazy;
}

int dls_sim_kernel_first_load(struct CUfunc_st *k, struct CUctx_st *ctx)
{
    if (!lazy_loading())
        return 0;
    dls_sim_lock();
    struct dls_sim_loaded *l = k->loaded;
    while (l && l->ctx != ctx)
        l = l->next;
    if (!l && (l = malloc(sizeof *l)) != NULL) {
        *l = (struct dls_sim_loaded){ctx, k->loaded};
        k->loaded = l;
        dls_sim_unlock();
        return 1;
    }
    dls_sim_unlock();
    return 0;
}
