/* Scenario devices_legacy (two devices): the producer writes on device 0's legacy default stream;
 * device 1 is current at export and import, and the consumer reads on its own device-1 stream.
 * Racy: nothing orders the read after the write; correct: the program records an event on device
 * 0's legacy stream (device 0 current) and makes the consumer's stream wait for it. A fix that
 * resolved the legacy handle in the current context would order device 1's legacy stream. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    void *h = scen_to_device1(FW_LEGACY, racy, N);
    tvm_read(h);
    scen_finish(h, 1, N);
    return 0;
}
