/* Scenario per_thread: the producer writes on the per-thread default stream (cudaStreamPerThread);
 * the consumer reads on the same per-thread stream in the correct twin (stream order) and on
 * its own non-blocking stream in the racy one. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_PER_THREAD);
    tvm_init(racy ? FW_NON_BLOCKING : FW_PER_THREAD);
    mx_array *a = scen_held_write(N);
    return scen_handover(a, N);
}
