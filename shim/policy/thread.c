/* The policy's per-thread block (see thread.h). */
#include "thread.h"

static __thread dls_pol_thread t_self __attribute__((tls_model("local-dynamic")));

dls_pol_thread *dls_pol_thread_self(void)
{
    return &t_self;
}
