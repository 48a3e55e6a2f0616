/* The work decoder (see decode.h, dls_cuda_decode_work): calls.def's LAUNCH, LAUNCH_EX,
 * LAUNCH_LEGACY, SET and SET_2D rows and its asynchronous COPY rows, the calls the work lane
 * delivers. Each case reads its call's parameters as `p` (calls.def's F). */
#include "decode_work.h"

#include "decode_common.h"

#include "cbids.h"
#include "kparams.h"

/* Appends [addr, addr + n) unless it is empty. */
static void add_range(dls_cuda_work *w, uintptr_t addr, size_t n, unsigned access)
{
    if (n)
        w->ranges[w->nranges++] = (dls_cuda_range){.addr = addr, .len = n, .access = access};
}

/* w's stream as the call names it. */
static void on_stream(dls_cuda_work *w, dls_op_kind kind, CUstream h, int ptsz)
{
    w->kind = kind;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
}

/* The launch of f on stream h, its argument words in words[0..cap). */
static void launch(dls_cuda_work *w, CUstream h, int ptsz, CUfunction f, void **kernel_params, void **extra,
                   uint64_t *words, uint32_t cap)
{
    on_stream(w, DLS_OP_LAUNCH, h, ptsz);
    w->words = words;
    if (!dls_cuda_kernel_words(f, kernel_params, extra, words, cap, &w->nwords))
        w->flags |= DLS_OPF_CONSERVATIVE;
}

/* A linear copy of n bytes on stream h; an address of 0 is a CUarray side (no range). */
static void copy(dls_cuda_work *w, CUstream h, int ptsz, uintptr_t dst, uintptr_t src, size_t n)
{
    on_stream(w, DLS_OP_MEMCPY, h, ptsz);
    if (src)
        add_range(w, src, n, DLS_ACCESS_READ);
    if (dst)
        add_range(w, dst, n, DLS_ACCESS_WRITE);
}

/* A set of n bytes at dst on stream h; a synchronous one is not DLS_OPF_ASYNC. */
static void set(dls_cuda_work *w, CUstream h, int ptsz, int async, uintptr_t dst, size_t n)
{
    on_stream(w, DLS_OP_MEMSET, h, ptsz);
    if (!async)
        w->flags = 0;
    add_range(w, dst, n, DLS_ACCESS_WRITE);
}

#define IS_STREAM_WORK(name, class) \
    _Static_assert(DLS_CBID_##class == DLS_CBID_STREAM_WORK, #name ": the work lane's calls are stream work")
#define CASE(name, class)                            \
    case CUPTI_DRIVER_TRACE_CBID_##name: {           \
        IS_STREAM_WORK(name, class);                 \
        const name##_params *p = cb->functionParams; \
        (void)p;
#define END_CASE \
    return 1;    \
    }

#define LAUNCH(name, class, ptsz, extra)                                   \
    CASE(name, class)                                                      \
    launch(w, p->hStream, ptsz, p->f, p->kernelParams, extra, words, cap); \
    END_CASE
#define LAUNCH_EX(name, class, ptsz)                                                                     \
    CASE(name, class)                                                                                    \
    launch(w, p->config ? p->config->hStream : NULL, ptsz, p->f, p->kernelParams, p->extra, words, cap); \
    END_CASE
#define LAUNCH_LEGACY(name, class, stream)              \
    CASE(name, class)                                   \
    on_stream(w, DLS_OP_LAUNCH, stream, 0);             \
    w->flags |= DLS_OPF_CONSERVATIVE; /* cuParamSet* */ \
    END_CASE
#define COPY(name, class, ptsz, async, stream, dst, src)                             \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                                           \
        _Static_assert(!(async) || DLS_CBID_##class == DLS_CBID_STREAM_WORK,         \
                       #name ": the work lane's calls are stream work");             \
        if (async) {                                                                 \
            const name##_params *p = cb->functionParams;                             \
            copy(w, stream, ptsz, (uintptr_t)(dst), (uintptr_t)(src), p->ByteCount); \
            return 1;                                                                \
        }                                                                            \
        return 0;                                                                    \
    }
#define SET(name, class, ptsz, async, stream, elsize)                     \
    CASE(name, class)                                                     \
    set(w, stream, ptsz, async, (uintptr_t)p->dstDevice, p->N *(elsize)); \
    END_CASE
#define SET_2D(name, class, ptsz, async, stream, elsize)                     \
    CASE(name, class)                                                        \
    set(w, stream, ptsz, async, (uintptr_t)p->dstDevice,                     \
        p->Height ? (p->Height - 1) * p->dstPitch + p->Width *(elsize) : 0); \
    END_CASE

int dls_cuda_decode_work(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w, uint64_t *words,
                         uint32_t cap)
{
    if (!cb->functionParams)
        return 0;
    w->flags = DLS_OPF_ASYNC;
    w->nranges = w->nwords = 0;
    w->words = NULL;
    switch (cbid) {
#include "calls.def"
    default:
        return 0;
    }
}
