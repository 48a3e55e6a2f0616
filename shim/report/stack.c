/* Stack capture with backtrace(3) and symbolization with dladdr(3) (see stack.h). */
#include "stack.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void dls_stack_capture(dls_stack *s)
{
    s->n = backtrace(s->pc, DLS_STACK_MAX);
    if (s->n < 0)
        s->n = 0;
}

static const void *g_self_base; /* load address of the shim, set once */
static pthread_once_t g_self_once = PTHREAD_ONCE_INIT;

static void find_self(void)
{
    Dl_info me;
    if (dladdr((void *)dls_stack_capture, &me))
        g_self_base = me.dli_fbase;
}

/* 1 when the object `path` is the shim, the CUDA driver or CUPTI. Reports are symbolized on
 * several threads at once. */
static int skipped_object(const char *path, const void *fbase)
{
    pthread_once(&g_self_once, find_self);
    if (fbase && fbase == g_self_base)
        return 1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libcuda.so", 10) == 0 || strncmp(base, "libcupti.so", 11) == 0;
}

int dls_stack_symbolize(const dls_stack *s, int max, void (*emit)(const char *frame, void *user), void *user)
{
    int out = 0;
    for (int i = 0; i < s->n && out < max; i++) {
        Dl_info info;
        char line[512];
        /* A return address points after the call; look up the byte before it. */
        uintptr_t pc = (uintptr_t)s->pc[i] - (i > 0);
        if (!dladdr((void *)pc, &info) || !info.dli_fname) {
            snprintf(line, sizeof line, "0x%jx", (uintmax_t)pc);
        } else {
            if (skipped_object(info.dli_fname, info.dli_fbase))
                continue;
            const char *lib = strrchr(info.dli_fname, '/');
            lib = lib ? lib + 1 : info.dli_fname;
            if (info.dli_sname && info.dli_saddr)
                snprintf(line, sizeof line, "%s+0x%jx (%s)", info.dli_sname,
                         (uintmax_t)(pc - (uintptr_t)info.dli_saddr), lib);
            else
                snprintf(line, sizeof line, "%s+0x%jx", lib, (uintmax_t)(pc - (uintptr_t)info.dli_fbase));
        }
        emit(line, user);
        out++;
    }
    return out;
}
