/* libelf symbol reader (see elfsyms.h). */
#include "elfsyms.h"

#include "filekind.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Symbol reading's outcomes besides 0: out of memory, and a section that cannot be read. */
#define READ_NOMEM (-1)
#define READ_CORRUPT (-2)

static int read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, int (*keep)(const char *, void *), void *ctx,
                        dls_elf_info *info, size_t *cap)
{
    int dyn = sh->sh_type == SHT_DYNSYM;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !sh->sh_entsize || d->d_size < sh->sh_size)
        return sh->sh_size ? READ_CORRUPT : 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 1; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)i, &sym))
            return READ_CORRUPT;
        int type = GELF_ST_TYPE(sym.st_info);
        int undef = sym.st_shndx == SHN_UNDEF;
        if (type != STT_FUNC && type != STT_GNU_IFUNC && !(undef && type == STT_NOTYPE))
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
        if (!name)
            return READ_CORRUPT;
        if (!*name || !keep(name, ctx))
            continue;
        dls_elf_sym *s = find_or_add(info, cap, name);
        if (!s)
            return READ_NOMEM;
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

/* Opens path for reading when it is a regular file (never waiting on a FIFO); -1 with a reason,
 * and *size its size. */
static int open_regular(const char *path, off_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s, not an ELF object", dls_file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    *size = st.st_size;
    return fd;
}

/* Opens the ELF object of fd; NULL with a reason when it is none, or is cut short. */
static Elf *begin(int fd, off_t size, GElf_Ehdr *eh, char *err, size_t errlen)
{
    if (elf_version(EV_CURRENT) == EV_NONE) {
        snprintf(err, errlen, "libelf is out of date");
        return NULL;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, eh)) {
        snprintf(err, errlen, "not an ELF object%s",
                 elf && elf_kind(elf) == ELF_K_AR ? " (an archive: scan its members)" : "");
    } else if ((uint64_t)eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize > (uint64_t)size ||
               (uint64_t)eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize > (uint64_t)size) {
        snprintf(err, errlen, "truncated ELF object (its headers reach past the end of the file, %lld bytes)",
                 (long long)size);
    } else {
        return elf;
    }
    if (elf)
        elf_end(elf);
    return NULL;
}

int dls_elf_read(const char *path, int (*keep)(const char *name, void *ctx), void *ctx, dls_elf_info *info, char *err,
                 size_t errlen)
{
    memset(info, 0, sizeof *info);
    off_t size = 0;
    int fd = open_regular(path, &size, err, errlen);
    if (fd < 0)
        return -1;
    GElf_Ehdr eh;
    Elf *elf = begin(fd, size, &eh, err, errlen);
    int rc = -1;
    size_t shnum = 0;
    if (!elf)
        goto out;
    if (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) {
        snprintf(err, errlen, "neither a shared object nor an executable (ELF type %d)", (int)eh.e_type);
        goto out;
    }
    if (elf_getshdrnum(elf, &shnum) != 0 || shnum == 0) {
        snprintf(err, errlen, "%s",
                 shnum == 0 ? "no section headers: its symbols cannot be read"
                            : "corrupt ELF object: its section headers cannot be read");
        goto out;
    }
    int pie = 0;
    size_t cap = 0;
    Elf_Scn *scn = NULL;
    rc = 0;
    while (rc == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            rc = READ_CORRUPT;
            break;
        }
        if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > (uint64_t)size || sh.sh_size > (uint64_t)size - sh.sh_offset) &&
            (sh.sh_type == SHT_DYNAMIC || sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB ||
             sh.sh_type == SHT_STRTAB)) {
            rc = READ_CORRUPT;
            break;
        }
        if (sh.sh_type == SHT_DYNAMIC)
            read_dynamic(scn, &sh, &pie, &info->symbolic);
        else if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB)
            rc = read_symbols(elf, scn, &sh, keep, ctx, info, &cap);
    }
    if (rc == READ_NOMEM)
        snprintf(err, errlen, "out of memory");
    else if (rc == READ_CORRUPT)
        snprintf(err, errlen, "truncated or corrupt ELF object: section %zu cannot be read (%s)",
                 scn ? elf_ndxscn(scn) : 0, elf_errmsg(-1) ? elf_errmsg(-1) : "out of the file");
    info->is_exec = eh.e_type == ET_EXEC || pie;
    info->is_shared = !info->is_exec;
out:
    if (elf)
        elf_end(elf);
    close(fd);
    if (rc != 0)
        dls_elf_info_free(info);
    return rc != 0 ? -1 : 0;
}

void dls_elf_info_free(dls_elf_info *info)
{
    for (size_t i = 0; i < info->n; i++)
        free(info->syms[i].name);
    free(info->syms);
    memset(info, 0, sizeof *info);
}
