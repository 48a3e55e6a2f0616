/* ELF symbol reader on <elf.h> alone (see elfsyms.h). The file is read with pread into buffers
 * whose offsets and sizes are checked against its size first; it is never mapped, so a file cut
 * short while it is read is an error, not a SIGBUS. The work is bounded by the file's size: one
 * table of each kind, and names read at most NAME_BUDGET times their string table's size. */
#include "elfsyms.h"

#include "filekind.h"
#include "grow.h"
#include "tally.h"

#include <ar.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tools/elfsyms.c reads little-endian ELF structures in the host's byte order"
#endif

/* Linkers share a string only by tail merging, so the names of one table add up to little more
 * than its string table; a table whose names add up to more than NAME_BUDGET times it, plus
 * NAME_SLACK bytes (symbols pointing into one long string at every offset) is hostile, and
 * refused before it costs time. */
#define NAME_BUDGET 16
#define NAME_SLACK 4096

/* Symbol reading's outcomes besides 0: out of memory, and a section that cannot be read. */
#define READ_NOMEM (-1)
#define READ_CORRUPT (-2)

/* One open object: its descriptor and size, its section headers, and why a section could not be
 * read (for the error line). */
typedef struct {
    int fd;
    uint64_t size;
    Elf64_Shdr *sh;
    size_t shnum;
    const char *why;
} elf_file;

/* Whether [off, off + len) lies inside a file of `size` bytes (no overflow). */
static int inside(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* Reads len bytes at off into buf; NULL, or the reason they could not be read. */
static const char *read_at(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    while (len) {
        ssize_t got = pread(fd, p, len, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return strerror(errno);
        if (got == 0)
            return "the file got shorter while it was read";
        p += got;
        len -= (size_t)got;
        off += (uint64_t)got;
    }
    return NULL;
}

/* Marks the section being read as unreadable for `why`; returns READ_CORRUPT. */
static int corrupt(elf_file *f, const char *why)
{
    f->why = why;
    return READ_CORRUPT;
}

/* Reads the contents of section header sh into a new buffer *out (free it); 0, or READ_NOMEM /
 * READ_CORRUPT. */
static int load(elf_file *f, const Elf64_Shdr *sh, unsigned char **out)
{
    *out = NULL;
    if (!inside(sh->sh_offset, sh->sh_size, f->size))
        return corrupt(f, "out of the file");
    unsigned char *buf = malloc(sh->sh_size ? sh->sh_size : 1);
    if (!buf)
        return READ_NOMEM;
    const char *why = read_at(f->fd, buf, sh->sh_size, sh->sh_offset);
    if (why) {
        free(buf);
        return corrupt(f, why);
    }
    *out = buf;
    return 0;
}

/* Reads DT_FLAGS / DT_FLAGS_1 / DT_SYMBOLIC from the SHT_DYNAMIC section sh. */
static int read_dynamic(elf_file *f, const Elf64_Shdr *sh, int *pie, int *symbolic)
{
    if (!sh->sh_size)
        return 0;
    if (sh->sh_entsize != sizeof(Elf64_Dyn) || sh->sh_size % sizeof(Elf64_Dyn))
        return corrupt(f, "its entries are not of the size of Elf64_Dyn");
    unsigned char *data;
    int rc = load(f, sh, &data);
    for (size_t i = 0; rc == 0 && i < sh->sh_size / sizeof(Elf64_Dyn); i++) {
        Elf64_Dyn dyn;
        memcpy(&dyn, data + i * sizeof dyn, sizeof dyn);
        if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
            *pie = 1;
        if (dyn.d_tag == DT_SYMBOLIC || (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_SYMBOLIC)))
            *symbolic = 1;
    }
    free(data);
    return rc;
}

/* The entry of `name` in info, appended when it is new; `index` maps names to their entries.
 * NULL when memory runs out. */
static dlt_elf_sym *find_or_add(dlt_elf_info *info, size_t *cap, dlt_tally *index, const char *name)
{
    int fresh = 0;
    dlt_tally_entry *e = dlt_tally_add(index, name, &fresh);
    if (!e)
        return NULL;
    if (!fresh)
        return &info->syms[e->first];
    dlt_elf_sym *ns = dlt_grow(info->syms, cap, info->n + 1, sizeof *ns, 16);
    if (!ns)
        return NULL;
    info->syms = ns;
    dlt_elf_sym *s = &info->syms[info->n];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    if (!s->name)
        return NULL;
    e->first = info->n++;
    return s;
}

/* Merges the function-like symbols `keep` accepts of the SHT_DYNSYM or SHT_SYMTAB section sh
 * into info. */
static int read_symbols(elf_file *f, const Elf64_Shdr *sh, int (*keep)(const char *, void *), void *ctx,
                        dlt_elf_info *info, size_t *cap, dlt_tally *index)
{
    if (!sh->sh_size)
        return 0;
    if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_size % sizeof(Elf64_Sym))
        return corrupt(f, "its entries are not of the size of Elf64_Sym");
    if (sh->sh_link >= f->shnum || f->sh[sh->sh_link].sh_type != SHT_STRTAB)
        return corrupt(f, "its sh_link names no string table");
    const Elf64_Shdr *strsh = &f->sh[sh->sh_link];
    unsigned char *syms = NULL, *strs = NULL;
    int rc = load(f, sh, &syms);
    if (rc == 0)
        rc = load(f, strsh, &strs);
    if (rc == 0 && (!strsh->sh_size || strs[strsh->sh_size - 1] != '\0'))
        rc = corrupt(f, "its string table does not end in a NUL");
    int dyn = sh->sh_type == SHT_DYNSYM;
    uint64_t budget = strsh->sh_size * NAME_BUDGET + NAME_SLACK;
    for (size_t i = 1; rc == 0 && i < sh->sh_size / sizeof(Elf64_Sym); i++) {
        Elf64_Sym sym;
        memcpy(&sym, syms + i * sizeof sym, sizeof sym);
        int type = ELF64_ST_TYPE(sym.st_info);
        int undef = sym.st_shndx == SHN_UNDEF;
        if (type != STT_FUNC && type != STT_GNU_IFUNC && !(undef && type == STT_NOTYPE))
            continue;
        if (sym.st_name >= strsh->sh_size) {
            rc = corrupt(f, "a name outside its string table");
            break;
        }
        const char *name = (const char *)strs + sym.st_name;
        size_t len = strlen(name) + 1;
        if (len > budget) {
            rc = corrupt(f, "its names overlap far more than a linker writes them");
            break;
        }
        budget -= len;
        if (!*name || !keep(name, ctx))
            continue;
        dlt_elf_sym *s = find_or_add(info, cap, index, name);
        if (!s) {
            rc = READ_NOMEM;
            break;
        }
        if (dyn)
            s->in_dynsym = 1;
        else
            s->in_symtab = 1;
        if (!undef) {
            if (dyn)
                s->dyn_defined = 1;
            /* The exported (.dynsym) definition decides; .symtab only fills in what is missing. */
            if (!s->defined || dyn) {
                s->bind = ELF64_ST_BIND(sym.st_info);
                s->visibility = ELF64_ST_VISIBILITY(sym.st_other);
            }
            s->defined = 1;
        } else if (!s->defined) {
            s->bind = ELF64_ST_BIND(sym.st_info);
            s->visibility = ELF64_ST_VISIBILITY(sym.st_other);
        }
    }
    free(syms);
    free(strs);
    return rc;
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
        snprintf(err, errlen, "%s, not an ELF object", dlt_file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    *size = st.st_size;
    return fd;
}

/* Reads the ELF header of f into *eh: 0, or -1 with a reason when the file is no ELF object, is
 * not 64-bit little-endian, or is cut short before the end of its headers. */
static int read_header(const elf_file *f, Elf64_Ehdr *eh, char *err, size_t errlen)
{
    memset(eh, 0, sizeof *eh);
    size_t got = f->size < sizeof *eh ? (size_t)f->size : sizeof *eh;
    const char *why = read_at(f->fd, eh, got, 0);
    const unsigned char *id = eh->e_ident;
    if (why) {
        snprintf(err, errlen, "%s", why);
    } else if (got < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) != 0 || id[EI_VERSION] != EV_CURRENT ||
               (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64) ||
               (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)) {
        snprintf(err, errlen, "not an ELF object%s",
                 got >= SARMAG && memcmp(id, ARMAG, SARMAG) == 0 ? " (an archive: scan its members)" : "");
    } else if (id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != ELFDATA2LSB) {
        snprintf(err, errlen, "a %s ELF object: dlsync scan reads 64-bit little-endian ones",
                 id[EI_CLASS] != ELFCLASS64 ? (id[EI_DATA] != ELFDATA2LSB ? "32-bit big-endian" : "32-bit")
                                            : "big-endian");
    } else if (got < sizeof *eh || !inside(eh->e_phoff, (uint64_t)eh->e_phnum * eh->e_phentsize, f->size) ||
               !inside(eh->e_shoff, (uint64_t)eh->e_shnum * eh->e_shentsize, f->size)) {
        snprintf(err, errlen, "truncated ELF object (its headers reach past the end of the file, %llu bytes)",
                 (unsigned long long)f->size);
    } else {
        return 0;
    }
    return -1;
}

/* Reads the section headers of f (e_shnum, or the count in section 0's sh_size when there are
 * SHN_LORESERVE or more) into f->sh and f->shnum: 0, or -1 with a reason. */
static int read_sections(elf_file *f, const Elf64_Ehdr *eh, char *err, size_t errlen)
{
    const char *bad = "corrupt ELF object: its section headers cannot be read";
    uint64_t n = eh->e_shnum;
    if (eh->e_shoff && eh->e_shentsize != sizeof(Elf64_Shdr)) {
        snprintf(err, errlen, "%s", bad);
        return -1;
    }
    if (eh->e_shoff && !n) {
        Elf64_Shdr first;
        if (!inside(eh->e_shoff, sizeof first, f->size) || read_at(f->fd, &first, sizeof first, eh->e_shoff)) {
            snprintf(err, errlen, "%s", bad);
            return -1;
        }
        n = first.sh_size;
    }
    if (!eh->e_shoff || !n) {
        snprintf(err, errlen, "no section headers: its symbols cannot be read");
        return -1;
    }
    if (n > f->size / sizeof(Elf64_Shdr) || !inside(eh->e_shoff, n * sizeof(Elf64_Shdr), f->size)) {
        snprintf(err, errlen, "truncated ELF object (its section headers reach past the end of the file, %llu bytes)",
                 (unsigned long long)f->size);
        return -1;
    }
    f->sh = malloc(n * sizeof *f->sh);
    const char *why = f->sh ? read_at(f->fd, f->sh, n * sizeof *f->sh, eh->e_shoff) : "out of memory";
    if (why) {
        snprintf(err, errlen, "%s: %s", bad, why);
        return -1;
    }
    f->shnum = (size_t)n;
    return 0;
}

/* Whether scan reads sections of this type (their contents must then lie inside the file). */
static int is_read(uint32_t type)
{
    return type == SHT_DYNAMIC || type == SHT_DYNSYM || type == SHT_SYMTAB || type == SHT_STRTAB;
}

int dlt_elf_read(const char *path, int (*keep)(const char *name, void *ctx), void *ctx, dlt_elf_info *info, char *err,
                 size_t errlen)
{
    memset(info, 0, sizeof *info);
    off_t size = 0;
    int fd = open_regular(path, &size, err, errlen);
    if (fd < 0)
        return -1;
    elf_file f = {.fd = fd, .size = (uint64_t)size};
    Elf64_Ehdr eh;
    int rc = -1;
    if (read_header(&f, &eh, err, errlen) != 0)
        goto out;
    if (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) {
        snprintf(err, errlen, "neither a shared object nor an executable (ELF type %d)", (int)eh.e_type);
        goto out;
    }
    if (read_sections(&f, &eh, err, errlen) != 0)
        goto out;
    int pie = 0, seen_dynamic = 0, seen_dynsym = 0, seen_symtab = 0;
    size_t cap = 0, i = 1;
    dlt_tally index = {0};
    rc = 0;
    for (; rc == 0 && i < f.shnum; i++) {
        const Elf64_Shdr *sh = &f.sh[i];
        int *seen = sh->sh_type == SHT_DYNAMIC  ? &seen_dynamic
                    : sh->sh_type == SHT_DYNSYM ? &seen_dynsym
                    : sh->sh_type == SHT_SYMTAB ? &seen_symtab
                                                : NULL;
        if (is_read(sh->sh_type) && !inside(sh->sh_offset, sh->sh_size, f.size))
            rc = corrupt(&f, "out of the file");
        else if (seen && (*seen)++)
            rc = corrupt(&f, "a second table of its type");
        else if (sh->sh_type == SHT_DYNAMIC)
            rc = read_dynamic(&f, sh, &pie, &info->symbolic);
        else if (sh->sh_type == SHT_DYNSYM || sh->sh_type == SHT_SYMTAB)
            rc = read_symbols(&f, sh, keep, ctx, info, &cap, &index);
    }
    dlt_tally_free(&index);
    if (rc == READ_NOMEM)
        snprintf(err, errlen, "out of memory");
    else if (rc == READ_CORRUPT)
        snprintf(err, errlen, "truncated or corrupt ELF object: section %zu cannot be read (%s)", i - 1, f.why);
    info->is_exec = eh.e_type == ET_EXEC || pie;
    info->is_shared = !info->is_exec;
out:
    free(f.sh);
    close(fd);
    if (rc != 0)
        dlt_elf_info_free(info);
    return rc != 0 ? -1 : 0;
}

void dlt_elf_info_free(dlt_elf_info *info)
{
    for (size_t i = 0; i < info->n; i++)
        free(info->syms[i].name);
    free(info->syms);
    memset(info, 0, sizeof *info);
}
