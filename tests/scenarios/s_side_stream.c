/* Scenario side_stream: the producer writes on its own non-blocking stream and the consumer reads
 * on its own non-blocking stream; racy: nothing orders them (the classic missing-wait bug of
 * legacy to_dlpack/from_dlpack pairs); correct: an event recorded after the write is waited for
 * on the consumer stream. */
#include "scen.h"

int main(int argc, char **argv)
{
    scen_side_stream(scen_racy(argc, argv), 4);
    return 0;
}
