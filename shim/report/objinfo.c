/* Paths and build ids of loaded objects for offline symbolization (see objinfo.h). */
#include "objinfo.h"
#include "../common/mutex.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 64

typedef struct {
    int used;
    uintptr_t bias;
    char name[256]; /* the loader's name, the key with bias */
    dls_objinfo info;
} slot;

static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot g_slots[SLOTS];
static unsigned g_next; /* the slot replaced next */

/* What the dl_iterate_phdr callback looks for and finds. */
typedef struct {
    uintptr_t pc, bias;
    char *hex; /* out: DLS_BUILD_ID_HEX bytes */
} search;

/* dl_iterate_phdr callback (under the loader's lock: it only reads the object's loaded notes). */
static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    search *s = data;
    if (info->dlpi_addr != s->bias)
        return 0;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum && !holds; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        holds = ph->p_type == PT_LOAD && s->pc - info->dlpi_addr - ph->p_vaddr < ph->p_memsz;
    }
    if (!holds)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE && dls_build_id_from_notes((const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
                                                             ph->p_memsz, ph->p_align, s->hex))
            break;
    }
    return 1;
}

/* The slot of (bias, name), or NULL. Under g_lock. */
static slot *find(uintptr_t bias, const char *name)
{
    for (size_t i = 0; i < SLOTS; i++)
        if (g_slots[i].used && g_slots[i].bias == bias && strcmp(g_slots[i].name, name) == 0)
            return &g_slots[i];
    return NULL;
}

void dls_objinfo_get(uintptr_t pc, uintptr_t bias, const char *name, dls_objinfo *out)
{
    if (!name)
        name = "";
    dls_mutex_lock(&g_lock);
    slot *s = find(bias, name);
    if (s)
        *out = s->info;
    dls_mutex_unlock(&g_lock);
    if (s)
        return;
    memset(out, 0, sizeof *out);
    if (name[0]) {
        snprintf(out->path, sizeof out->path, "%s", name);
    } else {
        ssize_t n = readlink("/proc/self/exe", out->path, sizeof out->path - 1);
        out->path[n > 0 ? n : 0] = '\0';
    }
    search q = {.pc = pc, .bias = bias, .hex = out->build_id};
    dl_iterate_phdr(visit, &q);
    dls_mutex_lock(&g_lock);
    if (!find(bias, name)) {
        slot *fresh = &g_slots[g_next++ % SLOTS];
        fresh->used = 1;
        fresh->bias = bias;
        snprintf(fresh->name, sizeof fresh->name, "%s", name);
        fresh->info = *out;
    }
    dls_mutex_unlock(&g_lock);
}
