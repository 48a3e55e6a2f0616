/* The observer's per-thread block (see thread.h). */
#include "thread.h"

#include "../common/thread_block.h"
#include "../report/warn.h"

static __thread dls_cuda_thread t_self __attribute__((tls_model("local-dynamic")));

dls_cuda_thread *dls_cuda_thread_self(void)
{
    return &t_self;
}

static dls_thread_block g_scratch = DLS_THREAD_BLOCK_INIT(sizeof(dls_cuda_scratch));

dls_cuda_scratch *dls_cuda_thread_scratch(dls_cuda_thread *t)
{
    if (t->scratch)
        return t->scratch;
    if (!dls_thread_block_new(&g_scratch, (void **)&t->scratch))
        dls_warn_once("observer-scratch-memory",
                      "out of memory for a thread's decode area: its kernel launches, copies and sets are "
                      "taken to touch any memory");
    return t->scratch;
}
