/* Scenario devices_stream (two devices): the producer writes on its own non-blocking stream of
 * device 0; device 1 is current at export and import, and the consumer reads on its own device-1
 * stream. Racy: nothing orders them; correct: the program's event, recorded with device 0
 * current, is waited for on the consumer's stream. An event created in the current context
 * (device 1) cannot be recorded on the producer's stream. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    void *h = scen_to_device1(FW_NON_BLOCKING, racy, N);
    tvm_read(h);
    scen_finish(h, 1, N);
    return 0;
}
