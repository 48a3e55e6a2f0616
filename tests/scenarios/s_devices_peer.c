/* Scenario devices_peer (two devices): the producer writes on its own stream of device 0; device
 * 1 is current at export and import, and the consumer first copies the tensor to device 1 with
 * cudaMemcpyPeerAsync on its own device-1 stream, then reads the copy. Racy: nothing orders the
 * peer copy after the write; correct: the program's cross-device event wait does. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    void *h = scen_to_device1(FW_NON_BLOCKING, racy, N);
    tvm_fetch(h);
    tvm_read(h);
    scen_finish(h, 1, N);
    return 0;
}
