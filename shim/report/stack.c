/* Stack capture with the cached-rule walk (unwind.h; backtrace(3) where it cannot walk) and
 * symbolization with dladdr(3) (see stack.h). */
#include "stack.h"

#include "../common/config.h"
#include "objinfo.h"
#include "unwind.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void dls_stack_unloaded(void)
{
    dls_unwind_unloaded();
}

void dls_stack_capture_native(dls_stack *s)
{
    s->n = dls_unwind(s->pc, DLS_STACK_MAX);
    if (s->n < 0)
        s->n = backtrace(s->pc, DLS_STACK_MAX);
    if (s->n < 0)
        s->n = 0;
    s->py = 0;
}

void dls_stack_capture(dls_stack *s)
{
    dls_stack_capture_native(s);
    s->py = dls_config_get()->stack == DLS_STACK_NATIVE ? 0 : dls_pyframes_capture();
}

static const void *g_self_base; /* load address of the shim, set once */
static pthread_once_t g_self_once = PTHREAD_ONCE_INIT;

static void find_self(void) DLS_UNLOCKED
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

#define PY_MAX 12

int dls_stack_python(const dls_stack *s, dls_pyframe *out, int max)
{
    int n = 0;
    if (s->py && dls_pyframes_get(s->py, out, max, &n) != DLS_PYFRAMES_READY)
        n = 0;
    return n;
}

int dls_stack_symbolize(const dls_stack *s, int max, dls_stack_emit emit, void *user)
{
    dls_pyframe py[PY_MAX];
    int npy = dls_stack_python(s, py, PY_MAX);
    dls_stack_kind kind = dls_config_get()->stack;
    int out = 0;
    char line[512];
    dls_objinfo obj;
    for (int i = 0; i < s->n && out < max && !(npy && kind == DLS_STACK_PYTHON); i++) {
        Dl_info info;
        struct link_map *map = NULL;
        /* A return address points after the call; look up the byte before it. */
        uintptr_t pc = (uintptr_t)s->pc[i] - (i > 0);
        dls_stack_where where = {.offset = pc};
        if (!dladdr1((void *)pc, &info, (void **)&map, RTLD_DL_LINKMAP) || !info.dli_fname) {
            snprintf(line, sizeof line, "0x%jx", (uintmax_t)pc);
        } else {
            if (skipped_object(info.dli_fname, info.dli_fbase))
                continue;
            if (npy && dls_pyframes_interpreter_object(info.dli_fbase, info.dli_fname))
                break; /* the Python frames stand for the interpreter's */
            const char *lib = strrchr(info.dli_fname, '/');
            lib = lib ? lib + 1 : info.dli_fname;
            if (info.dli_sname && info.dli_saddr)
                snprintf(line, sizeof line, "%s+0x%jx (%s)", info.dli_sname,
                         (uintmax_t)(pc - (uintptr_t)info.dli_saddr), lib);
            else
                snprintf(line, sizeof line, "%s+0x%jx", lib, (uintmax_t)(pc - (uintptr_t)info.dli_fbase));
            if (map) {
                dls_objinfo_get(pc, (uintptr_t)map->l_addr, map->l_name, &obj);
                where.object = obj.path[0] ? obj.path : NULL;
                where.build_id = obj.build_id;
                where.offset = pc - (uintptr_t)map->l_addr;
            }
        }
        emit(line, &where, user);
        out++;
    }
    for (int i = 0; i < npy && out < max; i++, out++) {
        snprintf(line, sizeof line, "%.96s (%.200s:%d)", py[i].function, py[i].file, py[i].line);
        emit(line, NULL, user);
    }
    return out;
}
