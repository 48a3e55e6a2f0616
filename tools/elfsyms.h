/* Reading the symbols of one 64-bit little-endian ELF object, for `dlsync scan`.
 *
 * Symbols of .dynsym and .symtab are merged by name into one entry each, keeping what
 * interposition depends on: defined or not, binding, visibility, and which tables hold it. */
#ifndef DLT_ELFSYMS_H
#define DLT_ELFSYMS_H

#include <stddef.h>

typedef struct {
    char *name;      /* raw (possibly mangled) name, owned */
    int defined;     /* st_shndx != SHN_UNDEF in some table */
    int in_dynsym;   /* listed (defined or imported) in .dynsym */
    int in_symtab;   /* listed in .symtab */
    int dyn_defined; /* defined in .dynsym */
    int bind;        /* STB_* of the defining entry (or of the import) */
    int visibility;  /* STV_* of the defining entry (or of the import) */
} dlt_elf_sym;

typedef struct {
    int is_shared; /* a shared object (ET_DYN without DF_1_PIE) */
    int is_exec;   /* an executable (ET_EXEC, or ET_DYN flagged PIE) */
    int symbolic;  /* DT_SYMBOLIC / DF_SYMBOLIC: references inside it bind locally */
    dlt_elf_sym *syms;
    size_t n;
} dlt_elf_info;

/* Keeps the function-like symbols (FUNC, IFUNC, GNU_IFUNC, or untyped imports) whose name
 * `keep` accepts (keep(name, ctx) != 0). Fills *info (free with dlt_elf_info_free) and returns
 * 0, or returns -1 with a one-line reason in err (errlen bytes) when the file cannot be read
 * as an ELF object: not a regular file (a directory or FIFO is never opened for reading), not
 * ELF, not 64-bit little-endian, truncated (headers past its end), corrupt (a section that cannot
 * be read: out of the file, entries of the wrong size, names outside their string table, a
 * second table of one kind), or without section headers. Nothing is read outside the file, and
 * the time it takes is bounded by the file's size. */
int dlt_elf_read(const char *path, int (*keep)(const char *name, void *ctx), void *ctx, dlt_elf_info *info, char *err,
                 size_t errlen);

/* Frees what dlt_elf_read filled and zeroes *info. */
void dlt_elf_info_free(dlt_elf_info *info);

#endif
