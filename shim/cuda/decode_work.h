/* The work decoder, inline: the kernel launches, linear copies and sets of calls.def (its LAUNCH,
 * LAUNCH_EX, COPY, SET and SET_2D rows), whose asynchronous forms make up almost all of a
 * program's stream work. The observer's callback decodes the work lane's calls with it in place
 * (the launches, and the asynchronous copies and sets); dls_cuda_decode_work (decode_work.c) is
 * the same decoder out of line, every form, from which dls_cuda_decode builds their
 * dls_cuda_op. */
#ifndef DLS_CUDA_DECODE_WORK_H
#define DLS_CUDA_DECODE_WORK_H

#include "cbids.h"
#include "decode.h"

/* Appends [addr, addr + n) unless it is empty. */
static inline void dls_cuda_work_range(dls_cuda_work *w, uintptr_t addr, size_t n, unsigned access)
{
    if (n)
        w->ranges[w->nranges++] = (dls_cuda_range){.addr = addr, .len = n, .access = access};
}

/* A linear copy of n bytes on stream h; an address of 0 is a CUarray side (no range). */
static inline void dls_cuda_work_copy(dls_cuda_work *w, CUstream h, int ptsz, int async, uintptr_t dst, uintptr_t src,
                                      size_t n)
{
    w->kind = DLS_OP_MEMCPY;
    if (!async)
        w->flags &= ~DLS_OPF_ASYNC;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
    if (src)
        dls_cuda_work_range(w, src, n, DLS_ACCESS_READ);
    if (dst)
        dls_cuda_work_range(w, dst, n, DLS_ACCESS_WRITE);
}

/* A set of n bytes at dst on stream h. */
static inline void dls_cuda_work_set(dls_cuda_work *w, CUstream h, int ptsz, int async, uintptr_t dst, size_t n)
{
    w->kind = DLS_OP_MEMSET;
    if (!async)
        w->flags &= ~DLS_OPF_ASYNC;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
    dls_cuda_work_range(w, dst, n, DLS_ACCESS_WRITE);
}

/* Empties w's flags (but DLS_OPF_ASYNC), ranges, words and sink note for a decoder to fill. */
static inline void dls_cuda_work_init(dls_cuda_work *w)
{
    w->flags = DLS_OPF_ASYNC;
    w->nranges = w->nwords = 0;
    w->words = NULL;
    w->sink_note = 0;
}

/* The launches of dls_cuda_decode_work (decode.h), inline; their words are read out of line
 * (dls_cuda_work_launch). Each case reads its call's parameters as `p` (calls.def's F). */
static inline __attribute__((always_inline)) int dls_cuda_decode_launch_work_inline(CUpti_CallbackId cbid,
                                                                                    const CUpti_CallbackData *cb,
                                                                                    dls_cuda_work *w, uint64_t *words,
                                                                                    uint32_t cap)
{
    if (!cb->functionParams)
        return 0;
    dls_cuda_work_init(w);
    switch (cbid) {
#define LAUNCH(name, class, ptsz, extra)                                                            \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                                                          \
        _Static_assert(DLS_CBID_##class == DLS_CBID_LAUNCH, #name ": a launch is of class LAUNCH"); \
        const name##_params *p = cb->functionParams;                                                \
        dls_cuda_work_launch(w, p->hStream, ptsz, p->f, p->kernelParams, extra, words, cap);        \
        return 1;                                                                                   \
    }
#define LAUNCH_EX(name, class, ptsz)                                                                                 \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                                                                           \
        _Static_assert(DLS_CBID_##class == DLS_CBID_LAUNCH, #name ": a launch is of class LAUNCH");                  \
        const name##_params *p = cb->functionParams;                                                                 \
        dls_cuda_work_launch(w, p->config ? p->config->hStream : NULL, ptsz, p->f, p->kernelParams, p->extra, words, \
                             cap);                                                                                   \
        return 1;                                                                                                    \
    }
#include "calls.def"
    default:
        return 0;
    }
}

/* The copies and sets of dls_cuda_decode_work (decode.h), inline; they call nothing. With
 * `sync_forms` 0 (the work lane), only the asynchronous forms: the others return 0. The work
 * lane is reached only by calls of class STREAM_WORK or LAUNCH (callback.c), so an asynchronous
 * copy or set must be STREAM_WORK. */
static inline __attribute__((always_inline)) int
dls_cuda_decode_copy_set_forms(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w, int sync_forms)
{
    if (!cb->functionParams)
        return 0;
    dls_cuda_work_init(w);
    switch (cbid) {
#define WORK_FORM(name, class, async)                                              \
    _Static_assert(!(async) || DLS_CBID_##class == DLS_CBID_STREAM_WORK,           \
                   #name ": an asynchronous copy or set is of class STREAM_WORK"); \
    if (!(async) && !sync_forms)                                                   \
        return 0;                                                                  \
    const name##_params *p = cb->functionParams
#define COPY(name, class, ptsz, async, stream, dst, src)                                              \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                                                            \
        WORK_FORM(name, class, async);                                                                \
        dls_cuda_work_copy(w, stream, ptsz, async, (uintptr_t)(dst), (uintptr_t)(src), p->ByteCount); \
        return 1;                                                                                     \
    }
#define SET(name, class, ptsz, async, stream, elsize)                                       \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                                                  \
        WORK_FORM(name, class, async);                                                      \
        dls_cuda_work_set(w, stream, ptsz, async, (uintptr_t)p->dstDevice, p->N *(elsize)); \
        return 1;                                                                           \
    }
#define SET_2D(name, class, ptsz, async, stream, elsize)                                       \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                                                     \
        WORK_FORM(name, class, async);                                                         \
        dls_cuda_work_set(w, stream, ptsz, async, (uintptr_t)p->dstDevice,                     \
                          p->Height ? (p->Height - 1) * p->dstPitch + p->Width *(elsize) : 0); \
        return 1;                                                                              \
    }
#include "calls.def"
#undef WORK_FORM
    default:
        return 0;
    }
}

/* The work lane's copies and sets: their asynchronous forms. */
static inline __attribute__((always_inline)) int
dls_cuda_decode_copy_set_inline(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w)
{
    return dls_cuda_decode_copy_set_forms(cbid, cb, w, 0);
}

#endif
