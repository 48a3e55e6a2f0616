/* Scenario legacy_stream: the producer writes on a blocking stream (cudaStreamCreate); the
 * consumer reads on the legacy default stream in the correct twin (implicitly ordered after
 * every blocking stream) and on a non-blocking stream in the racy one (exempt from that rule). */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_BLOCKING);
    tvm_init(racy ? FW_NON_BLOCKING : FW_LEGACY);
    mx_array *a = scen_held_write(N);
    return scen_handover(a, N);
}
