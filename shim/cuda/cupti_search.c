/* CUPTI library search (see cupti_search.h). */
#include "cupti_search.h"

#include <link.h>
#include <stdio.h>
#include <string.h>

/* Appends path unless it is already listed or does not fit; returns the new count. */
static size_t add(char (*out)[DLS_PATH_MAX], size_t k, size_t cap, const char *path)
{
    if (k >= cap || strlen(path) >= DLS_PATH_MAX)
        return k;
    for (size_t i = 0; i < k; i++)
        if (strcmp(out[i], path) == 0)
            return k;
    snprintf(out[k], DLS_PATH_MAX, "%s", path);
    return k + 1;
}

size_t dls_cupti_candidates(const char *const *loaded, size_t n, char (*out)[DLS_PATH_MAX], size_t cap)
{
    static const char *const beside[] = {"libcupti.so.13", "libcupti.so", "../extras/CUPTI/lib64/libcupti.so.13"};
    size_t k = 0;
    char path[DLS_PATH_MAX * 2];
    for (size_t i = 0; i < n; i++) {
        const char *slash = strrchr(loaded[i], '/');
        if (!slash)
            continue;
        int dirlen = (int)(slash - loaded[i]);
        for (size_t j = 0; j < sizeof beside / sizeof *beside; j++) {
            snprintf(path, sizeof path, "%.*s/%s", dirlen, loaded[i], beside[j]);
            k = add(out, k, cap, path);
        }
    }
    k = add(out, k, cap, "libcupti.so.13");
    return add(out, k, cap, "libcupti.so");
}

typedef struct {
    char (*out)[DLS_PATH_MAX];
    size_t cap, n;
    const char *prefix;
} walk;

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    walk *w = data;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (base && strncmp(base, w->prefix, strlen(w->prefix)) == 0)
        w->n = add(w->out, w->n, w->cap, name);
    return 0;
}

size_t dls_cuda_loaded_libs(char (*out)[DLS_PATH_MAX], size_t cap)
{
    walk w = {.out = out, .cap = cap, .n = 0, .prefix = "libcuda.so"};
    dl_iterate_phdr(visit, &w);
    w.prefix = "libcudart.so";
    dl_iterate_phdr(visit, &w);
    return w.n;
}
