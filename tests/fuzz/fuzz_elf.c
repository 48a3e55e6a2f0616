/* libFuzzer harness: the ELF symbol reader of `dlsync scan` (tools/elfsyms.c), on any bytes given
 * as a file. Properties: no crash, no leak, no read outside the file; either a reason or a symbol
 * list whose names are set, not empty and each listed once. */
#include "elfsyms.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int keep_all(const char *name, void *ctx)
{
    (void)name, (void)ctx;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    int fd = memfd_create("elf", 0);
    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        abort();
    char path[64], err[256] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    dlt_elf_info info;
    if (dlt_elf_read(path, keep_all, NULL, &info, err, sizeof err) == 0) {
        for (size_t i = 0; i < info.n; i++) {
            if (!info.syms[i].name || !info.syms[i].name[0])
                abort();
            for (size_t k = 0; k < i; k++)
                if (strcmp(info.syms[k].name, info.syms[i].name) == 0)
                    abort();
        }
        dlt_elf_info_free(&info);
    } else if (!err[0]) {
        abort();
    }
    close(fd);
    return 0;
}
