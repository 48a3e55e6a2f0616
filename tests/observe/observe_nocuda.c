/* A program with no CUDA at all, for the observer's end-to-end tests: prints which CUDA or CUPTI
 * libraries are loaded in it ("loaded: none" when there are none), the value of
 * CUDA_INJECTION64_PATH ("injection: <value>" or "injection: unset") and the injection library
 * dlsync chained ("chained: <value>" or "chained: unset"). */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int report(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    int *n = data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (strstr(name, "libcuda") || strstr(name, "libcupti")) {
        printf("loaded: %s\n", name);
        ++*n;
    }
    return 0;
}

int main(void)
{
    int n = 0;
    dl_iterate_phdr(report, &n);
    if (!n)
        printf("loaded: none\n");
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    printf("injection: %s\n", inj ? inj : "unset");
    const char *chained = getenv("DLSYNC_CHAINED_INJECTION");
    printf("chained: %s\n", chained ? chained : "unset");
    return 0;
}
