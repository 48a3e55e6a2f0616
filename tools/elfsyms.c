/* libelf symbol reader (see elfsyms.h). */
#include "elfsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads DT_FLAGS / DT_FLAGS_1 / DT_SYMBOLIC from a SHT_DYNAMIC section. */
static void read_dynamic(Elf_Scn *scn, const GElf_Shdr *sh, int *pie, int *symbolic)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !sh->sh_entsize)
        return;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(d, (int)i, &dyn))
            break;
        if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
            *pie = 1;
        if (dyn.d_tag == DT_SYMBOLIC || (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_SYMBOLIC)))
            *symbolic = 1;
    }
}

static dls_elf_sym *find_or_add(dls_elf_info *info, size_t *cap, const char *name)
{
    for (size_t i = 0; i < info->n; i++)
        if (strcmp(info->syms[i].name, name) == 0)
            return &info->syms[i];
    if (info->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        dls_elf_sym *ns = realloc(info->syms, nc * sizeof *ns);
        if (!ns)
            return NULL;
        info->syms = ns;
        *cap = nc;
    }
    dls_elf_sym *s = &info->syms[info->n];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    if (!s->name)
        return NULL;
    info->n++;
    return s;
}

static int read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, int (*keep)(const char *, void *), void *ctx,
                        dls_elf_info *info, size_t *cap)
{
    int dyn = sh->sh_type == SHT_DYNSYM;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !sh->sh_entsize)
        return 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 1; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)i, &sym))
            break;
        int type = GELF_ST_TYPE(sym.st_info);
        int undef = sym.st_shndx == SHN_UNDEF;
        if (type != STT_FUNC && type != STT_GNU_IFUNC && !(undef && type == STT_NOTYPE))
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
        if (!name || !*name || !keep(name, ctx))
            continue;
        dls_elf_sym *s = find_or_add(info, cap, name);
        if (!s)
            return -1;
        if (dyn)
            s->in_dynsym = 1;
        else
            s->in_symtab = 1;
        if (!undef) {
            if (dyn)
                s->dyn_defined = 1;
            /* The exported (.dynsym) definition decides; .symtab only fills in what is missing. */
            if (!s->defined || dyn) {
                s->bind = GELF_ST_BIND(sym.st_info);
                s->visibility = GELF_ST_VISIBILITY(sym.st_other);
            }
            s->defined = 1;
        } else if (!s->defined) {
            s->bind = GELF_ST_BIND(sym.st_info);
            s->visibility = GELF_ST_VISIBILITY(sym.st_other);
        }
    }
    return 0;
}

int dls_elf_read(const char *path, int (*keep)(const char *name, void *ctx), void *ctx, dls_elf_info *info, char *err,
                 size_t errlen)
{
    memset(info, 0, sizeof *info);
    if (elf_version(EV_CURRENT) == EV_NONE) {
        snprintf(err, errlen, "libelf is out of date");
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    int rc = -1;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        snprintf(err, errlen, "not an ELF object%s",
                 elf && elf_kind(elf) == ELF_K_AR ? " (an archive: scan its members)" : "");
        goto out;
    }
    if (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) {
        snprintf(err, errlen, "neither a shared object nor an executable (ELF type %d)", (int)eh.e_type);
        goto out;
    }
    int pie = 0;
    size_t cap = 0;
    Elf_Scn *scn = NULL;
    rc = 0;
    while (rc == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_DYNAMIC)
            read_dynamic(scn, &sh, &pie, &info->symbolic);
        else if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB)
            rc = read_symbols(elf, scn, &sh, keep, ctx, info, &cap);
    }
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    info->is_exec = eh.e_type == ET_EXEC || pie;
    info->is_shared = !info->is_exec;
out:
    if (elf)
        elf_end(elf);
    close(fd);
    if (rc != 0)
        dls_elf_info_free(info);
    return rc;
}

void dls_elf_info_free(dls_elf_info *info)
{
    for (size_t i = 0; i < info->n; i++)
        free(info->syms[i].name);
    free(info->syms);
    memset(info, 0, sizeof *info);
}
