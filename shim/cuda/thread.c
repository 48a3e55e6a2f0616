/* The observer's per-thread block (see thread.h). */
#include "thread.h"

static __thread dls_cuda_thread t_self __attribute__((tls_model("local-dynamic")));

dls_cuda_thread *dls_cuda_thread_self(void)
{
    return &t_self;
}
