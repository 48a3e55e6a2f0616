/* Calls the shim's NVTX marks the way the hooks do, from two threads: a range around an export,
 * a marker for an injected wait, and a marker from a second thread. */
#include <pthread.h>
#include <stdio.h>

#include "report/nvtx.h"

static void *second_thread(void *arg)
{
    (void)arg;
    dls_nvtx_mark("import xid 1");
    return NULL;
}

int main(void)
{
    dls_nvtx_range_push("export xid 1");
    dls_nvtx_mark("inject event-wait xid 1");
    dls_nvtx_range_pop();
    pthread_t t;
    if (pthread_create(&t, NULL, second_thread, NULL) != 0)
        return 1;
    pthread_join(t, NULL);
    puts("nvtx driver done");
    return 0;
}
