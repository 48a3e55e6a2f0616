/* GOT slots of loaded objects (see got.h). */
#include "got.h"
#include "../common/mutex.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

static dls_mutex g_write_lock = PTHREAD_MUTEX_INITIALIZER;

/* d_ptr values are absolute once glibc relocated the dynamic section (x86-64); a value below the
 * load bias is still relative. */
static uintptr_t absolute(uintptr_t base, uintptr_t p)
{
    return p && p < base ? p + base : p;
}

static unsigned visit(uintptr_t base, const ElfW(Rela) * r, size_t bytes, const ElfW(Sym) * symtab, const char *strtab,
                      size_t strsz, dls_got_visit_fn fn, void *arg)
{
    unsigned n = 0;
    for (size_t i = 0; r && i < bytes / sizeof *r; i++) {
        unsigned type = ELF64_R_TYPE(r[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        size_t sym = ELF64_R_SYM(r[i].r_info);
        if (sym == 0 || symtab[sym].st_name >= strsz)
            continue;
        fn((void **)(base + r[i].r_offset), strtab + symtab[sym].st_name, arg);
        n++;
    }
    return n;
}

unsigned dls_got_each(uintptr_t base, const void *dyn, dls_got_visit_fn fn, void *arg)
{
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmprel_sz = 0, rela_sz = 0, strsz = 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    long pltrel = DT_RELA;
    for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_JMPREL:
            jmprel = (const ElfW(Rela) *)absolute(base, d->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            jmprel_sz = d->d_un.d_val;
            break;
        case DT_PLTREL:
            pltrel = (long)d->d_un.d_val;
            break;
        case DT_RELA:
            rela = (const ElfW(Rela) *)absolute(base, d->d_un.d_ptr);
            break;
        case DT_RELASZ:
            rela_sz = d->d_un.d_val;
            break;
        case DT_SYMTAB:
            symtab = (const ElfW(Sym) *)absolute(base, d->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char *)absolute(base, d->d_un.d_ptr);
            break;
        case DT_STRSZ:
            strsz = d->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    unsigned n = visit(base, rela, rela_sz, symtab, strtab, strsz, fn, arg);
    if (pltrel == DT_RELA)
        n += visit(base, jmprel, jmprel_sz, symtab, strtab, strsz, fn, arg);
    return n;
}

int dls_got_write(void **slot, void *value, uintptr_t relro_lo, uintptr_t relro_hi)
{
    uintptr_t a = (uintptr_t)slot;
    int relro = a >= relro_lo && a < relro_hi;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    void *start = (void *)(a & ~(page - 1));
    int rc = 0;
    dls_mutex_lock(&g_write_lock);
    if (relro && mprotect(start, page, PROT_READ | PROT_WRITE) != 0) {
        rc = -1;
    } else {
        __atomic_store_n(slot, value, __ATOMIC_RELEASE);
        if (relro)
            mprotect(start, page, PROT_READ);
    }
    dls_mutex_unlock(&g_write_lock);
    return rc;
}
