/* Kernel parameter layouts and argument-word extraction (see kparams.h). */
#include "kparams.h"
#include "../common/mutex.h"

#include "drv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SLOTS 16384 /* distinct functions cached; beyond that, launches are conservative */
#define MAX_PARAMS 4096

typedef struct layout {
    uint64_t gen;
    struct layout *retired; /* next on the list of replaced layouts */
    int known;
    uint32_t nparams;
    struct {
        uint32_t offset, size;
    } p[];
} layout;

typedef struct {
    _Atomic uintptr_t key;
    _Atomic(const layout *) val;
} slot;

/* Not a dls_map: launches probe it without a lock (atomic keys, filled in place, never moved). */
static slot g_table[TABLE_SLOTS];
static atomic_uint_fast64_t g_gen = 1;
static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;
static layout *g_retired; /* replaced layouts: kept, a reader may still use one */

void dls_cuda_kparams_invalidate(void)
{
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_acq_rel);
}

static size_t hash(uintptr_t k)
{
    k ^= k >> 17;
    k *= 0x9e3779b97f4a7c15ull;
    return (size_t)(k >> 20) % TABLE_SLOTS;
}

/* Asks the driver for f's parameters with cuFuncGetParamInfo (use_kernel = 0) or
 * cuKernelGetParamInfo. Returns the count and sets *l (grown as needed), or -1 when the driver
 * cannot tell, -2 when out of memory. */
static long ask(CUfunction f, int use_kernel, layout **lp, size_t *cap)
{
    layout *l = *lp;
    l->nparams = 0;
    for (size_t i = 0; i < MAX_PARAMS; i++) {
        size_t off = 0, size = 0;
        CUresult r = use_kernel ? dls_drv_kernel_get_param_info((CUkernel)f, i, &off, &size)
                                : dls_drv_func_get_param_info(f, i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            return (long)l->nparams; /* past the last parameter */
        if (r != CUDA_SUCCESS)
            return -1;
        if (l->nparams == *cap) {
            layout *g = realloc(l, sizeof *l + *cap * 2 * sizeof l->p[0]);
            if (!g)
                return -2;
            *cap *= 2;
            *lp = l = g;
        }
        l->p[l->nparams].offset = (uint32_t)off;
        l->p[l->nparams].size = (uint32_t)size;
        l->nparams++;
    }
    return -1;
}

/* Builds f's layout: a new layout (known = 0 when the driver cannot tell), or NULL when out of
 * memory. A CUkernel may be launched as a CUfunction, so an empty or failed answer from
 * cuFuncGetParamInfo is checked with cuKernelGetParamInfo. */
static layout *query(CUfunction f, uint64_t gen)
{
    size_t cap = 16;
    layout *l = malloc(sizeof *l + cap * sizeof l->p[0]);
    if (!l)
        return NULL;
    l->gen = gen;
    l->retired = NULL;
    long as_func = ask(f, 0, &l, &cap);
    long count = as_func;
    if (as_func <= 0 && as_func != -2) {
        long as_kernel = ask(f, 1, &l, &cap);
        count = as_kernel >= 0 || as_kernel == -2 ? as_kernel : as_func;
        if (count == 0 || count == -1)
            l->nparams = 0;
    }
    if (count == -2) {
        free(l);
        return NULL;
    }
    l->known = count >= 0;
    return l;
}

/* The current layout of f (cached), or NULL when it cannot be had. */
static const layout *layout_of(CUfunction f)
{
    uintptr_t key = (uintptr_t)f;
    uint64_t gen = atomic_load_explicit(&g_gen, memory_order_acquire);
    size_t i = hash(key);
    for (size_t probe = 0; probe < TABLE_SLOTS; probe++, i = (i + 1) % TABLE_SLOTS) {
        uintptr_t k = atomic_load_explicit(&g_table[i].key, memory_order_acquire);
        if (k == 0)
            break;
        if (k == key) {
            const layout *l = atomic_load_explicit(&g_table[i].val, memory_order_acquire);
            if (l && l->gen == gen)
                return l;
            break;
        }
    }
    /* Miss or stale: ask the driver, then publish under the lock. Layouts are never freed (a
     * reader may still hold one); a replaced one goes on the retired list. */
    layout *fresh = query(f, gen);
    if (!fresh)
        return NULL;
    dls_mutex_lock(&g_lock);
    i = hash(key);
    for (size_t probe = 0; probe < TABLE_SLOTS; probe++, i = (i + 1) % TABLE_SLOTS) {
        uintptr_t k = atomic_load_explicit(&g_table[i].key, memory_order_relaxed);
        if (k == key || k == 0) {
            layout *old = (layout *)atomic_exchange_explicit(&g_table[i].val, fresh, memory_order_acq_rel);
            if (old) {
                old->retired = g_retired;
                g_retired = old;
            }
            if (k == 0)
                atomic_store_explicit(&g_table[i].key, key, memory_order_release);
            dls_mutex_unlock(&g_lock);
            return fresh;
        }
    }
    dls_mutex_unlock(&g_lock);
    /* Table full: use the layout for this launch only. */
    static __thread layout *t_last;
    free(t_last);
    t_last = fresh;
    return fresh;
}

/* Scans a whole argument buffer of `size` bytes. */
static int scan_buffer(const unsigned char *buf, size_t size, uint64_t *words, uint32_t cap, uint32_t *n)
{
    for (size_t off = 0; off + 8 <= size; off += 8) {
        if (*n == cap)
            return 0;
        memcpy(&words[(*n)++], buf + off, 8);
    }
    return 1;
}

int dls_cuda_kernel_words(CUfunction f, void **kernel_params, void **extra, uint64_t *words, uint32_t cap, uint32_t *n)
{
    *n = 0;
    if (extra) {
        const unsigned char *buf = NULL;
        const size_t *size = NULL;
        for (size_t i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                size = extra[i + 1];
            else
                return 0; /* an option this code does not know */
        }
        if (!kernel_params && buf && size)
            return scan_buffer(buf, *size, words, cap, n);
        if (!kernel_params)
            return 0;
    }
    const layout *l = layout_of(f);
    if (!l || !l->known)
        return 0;
    if (l->nparams && !kernel_params)
        return 0;
    for (uint32_t i = 0; i < l->nparams; i++) {
        const unsigned char *arg = kernel_params[i];
        size_t off = l->p[i].offset, end = off + l->p[i].size;
        for (size_t w = (off + 7) & ~(size_t)7; w + 8 <= end; w += 8) {
            if (*n == cap)
                return 0;
            memcpy(&words[(*n)++], arg + (w - off), 8);
        }
    }
    return 1;
}
