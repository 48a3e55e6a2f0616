/* The loader's hooks for the binding engine (see loader.h): the dlvsym entry callers' GOT slots
 * get. Apart from loader.c, which the entries (x86_64/loader.S) call, so that they form no cycle. */
#include "loader.h"

static const dls_engine_hook g_hooks[] = {
    {"dlvsym", (void *)dls_dlvsym_entry, NULL, 0, 1, 0},
};

const dls_engine_hook *dls_loader_hooks(size_t *n)
{
    *n = sizeof g_hooks / sizeof *g_hooks;
    return g_hooks;
}
