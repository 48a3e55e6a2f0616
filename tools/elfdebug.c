/* Build id and debug information of an ELF file (see elfdebug.h). */
#include "elfdebug.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_READ (1u << 20) /* bytes of one table read at most */

typedef struct {
    int fd;
    uint64_t size;
} file;

static int inside(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* A new buffer with the len bytes at off, or NULL when they are not all inside the file, too
 * many, or cannot be read. */
static unsigned char *read_block(const file *f, uint64_t off, uint64_t len)
{
    if (!inside(off, len, f->size) || len > MAX_READ)
        return NULL;
    unsigned char *buf = malloc(len ? len : 1);
    for (uint64_t done = 0; buf && done < len;) {
        ssize_t got = pread(f->fd, buf + done, len - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            free(buf);
            return NULL;
        }
        done += (uint64_t)got;
    }
    return buf;
}

/* The build id of the notes of [off, off + len) of the file; 1 when found. */
static int block_build_id(const file *f, uint64_t off, uint64_t len, uint64_t align, char *hex)
{
    unsigned char *notes = read_block(f, off, len);
    int found = notes && dls_build_id_from_notes(notes, len, align, hex);
    free(notes);
    return found;
}

/* Sections: the build id from SHT_NOTE sections, debug information from .debug_info or
 * .zdebug_info. */
static void read_sections(const file *f, const Elf64_Ehdr *eh, dlt_elf_debug *out)
{
    if (!eh->e_shoff || eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shnum || eh->e_shstrndx >= eh->e_shnum)
        return;
    Elf64_Shdr *sh = (Elf64_Shdr *)read_block(f, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof *sh);
    if (!sh)
        return;
    const Elf64_Shdr *names_sh = &sh[eh->e_shstrndx];
    char *names = (char *)read_block(f, names_sh->sh_offset, names_sh->sh_size);
    for (size_t i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type == SHT_NOTE && !out->build_id[0])
            block_build_id(f, sh[i].sh_offset, sh[i].sh_size, sh[i].sh_addralign, out->build_id);
        if (!names || sh[i].sh_name >= names_sh->sh_size || sh[i].sh_type == SHT_NOBITS || !sh[i].sh_size)
            continue;
        const char *name = names + sh[i].sh_name;
        size_t room = names_sh->sh_size - sh[i].sh_name;
        if ((strnlen(name, room) < room) && (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0))
            out->debug_info = 1;
    }
    free(names);
    free(sh);
}

/* Program headers: the build id from PT_NOTE segments (an object without section headers). */
static void read_segments(const file *f, const Elf64_Ehdr *eh, dlt_elf_debug *out)
{
    if (!eh->e_phoff || eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum)
        return;
    Elf64_Phdr *ph = (Elf64_Phdr *)read_block(f, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof *ph);
    for (size_t i = 0; ph && i < eh->e_phnum && !out->build_id[0]; i++)
        if (ph[i].p_type == PT_NOTE)
            block_build_id(f, ph[i].p_offset, ph[i].p_filesz, ph[i].p_align, out->build_id);
    free(ph);
}

int dlt_elf_debug_read(const char *path, dlt_elf_debug *out)
{
    memset(out, 0, sizeof *out);
    file f = {.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
    struct stat st;
    if (f.fd < 0)
        return -1;
    Elf64_Ehdr eh;
    int ok = fstat(f.fd, &st) == 0 && S_ISREG(st.st_mode);
    f.size = ok ? (uint64_t)st.st_size : 0;
    ok = ok && f.size >= sizeof eh && pread(f.fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
         memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
         eh.e_ident[EI_DATA] == ELFDATA2LSB;
    if (ok) {
        read_sections(&f, &eh, out);
        if (!out->build_id[0])
            read_segments(&f, &eh, out);
    }
    close(f.fd);
    return ok ? 0 : -1;
}
