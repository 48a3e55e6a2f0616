/* The first copy of the shim in the process (see claim.h). */
#include "claim.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    uintptr_t self;    /* an address inside this copy */
    int found, first;  /* a copy was seen; it was this one */
    char *active, *me; /* paths, n bytes each */
    size_t n;
} walk;

/* 1 when the object's dynamic section names it libdlsync.so. */
static int is_dlsync(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        uintptr_t strtab = 0, soname = 0;
        int has_soname = 0;
        for (; d->d_tag != DT_NULL; d++) {
            if (d->d_tag == DT_STRTAB)
                strtab = d->d_un.d_ptr;
            else if (d->d_tag == DT_SONAME) {
                soname = d->d_un.d_val;
                has_soname = 1;
            }
        }
        if (!strtab || !has_soname)
            return 0;
        /* The loader relocates DT_STRTAB in place, except in read-only dynamic sections (the vDSO). */
        if (strtab < info->dlpi_addr)
            strtab += info->dlpi_addr;
        return strcmp((const char *)(strtab + soname), "libdlsync.so") == 0;
    }
    return 0;
}

/* 1 when addr lies in one of the object's loaded segments. */
static int contains(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && addr >= lo && addr - lo < p->p_memsz)
            return 1;
    }
    return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    walk *w = data;
    int mine = contains(info, w->self);
    if (mine)
        snprintf(w->me, w->n, "%s", info->dlpi_name);
    if (!w->found && (mine || (info->dlpi_name && info->dlpi_name[0] && is_dlsync(info)))) {
        w->found = 1;
        w->first = mine;
        snprintf(w->active, w->n, "%s", info->dlpi_name);
    }
    return 0;
}

int dls_claim_first(char *active, char *self, size_t n)
{
    walk w = {.self = (uintptr_t)dls_claim_first, .active = active, .me = self, .n = n};
    active[0] = self[0] = '\0';
    dl_iterate_phdr(visit, &w);
    return !w.found || w.first;
}
