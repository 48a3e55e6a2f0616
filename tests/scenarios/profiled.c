/* The side_stream exchange beside a fake CUPTI profiler (libfakeprof.so): FAKEPROF=before
 * subscribes it before CUDA starts (before dlsync subscribes at cuInit), FAKEPROF=after once CUDA
 * runs; without FAKEPROF the program subscribes nothing itself (the profiler may still come in
 * through CUDA_INJECTION64_PATH). Prints the scenario's two lines, and the profiler's at exit. */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "scen.h"

void fakeprof_subscribe(void);

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    const char *when = getenv("FAKEPROF");
    if (when && strcmp(when, "before") == 0)
        fakeprof_subscribe();
    cudaFree(NULL); /* starts CUDA: dlsync subscribes now */
    if (when && strcmp(when, "after") == 0)
        fakeprof_subscribe();
    scen_side_stream(racy, 4);
    return 0;
}
