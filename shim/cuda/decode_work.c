/* The work decoder out of line, and what is built from a work (see decode_work.h). */
#include "decode_work.h"

#include "kparams.h"

void dls_cuda_work_launch(dls_cuda_work *w, CUstream h, int ptsz, CUfunction f, void **kernel_params, void **extra,
                          uint64_t *words, uint32_t cap)
{
    w->kind = DLS_OP_LAUNCH;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
    w->words = words;
    w->flags |= dls_cuda_kernel_words(f, kernel_params, extra, words, cap, &w->nwords) ? DLS_OPF_WORDS_EXACT
                                                                                       : DLS_OPF_CONSERVATIVE;
}

void dls_cuda_op_from_work(dls_cuda_op *op, const dls_cuda_work *w, const CUpti_CallbackData *cb,
                           dls_cuda_scratch *scratch)
{
    op->kind = w->kind;
    op->flags |= w->flags;
    dls_cuda_decode_stream(op, (CUstream)w->handle, w->per_thread, cb);
    for (uint32_t i = 0; i < w->nranges; i++)
        dls_cuda_decode_range(op, scratch, w->ranges[i].addr, w->ranges[i].len, w->ranges[i].access);
    op->words = w->words;
    op->nwords = w->nwords;
}

int dls_cuda_decode_work(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w, uint64_t *words,
                         uint32_t cap)
{
    return dls_cuda_decode_launch_work_inline(cbid, cb, w, words, cap) ||
           dls_cuda_decode_copy_set_forms(cbid, cb, w, 1);
}
