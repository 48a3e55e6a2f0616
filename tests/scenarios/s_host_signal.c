/* Scenario host_signal: the producer orders the tensor's readiness through a host function, as
 * XLA does: after the write on its stream it records an event, a second stream of its own waits
 * for it and runs a host function that marks the array ready. correct: the exporting thread
 * waits on the host for that mark before MXNDArrayToDLPack (as JAX's __dlpack__ without a stream
 * does), so the consumer's read, enqueued after, follows the write; racy: it exports at once and
 * nothing orders the read after the write. */
#include "scen.h"

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = scen_held_write(4);
    mx_signal_ready(a);
    if (!racy)
        mx_wait_ready(a);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        exit(2);
    mx_free(a);
    tvm_read(h);
    scen_finish(h, 1, 4);
    return 0;
}
