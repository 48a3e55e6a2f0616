/* What `dlsync report` needs to know of an ELF file before it asks a symbolizer about it:
 * its GNU build id (is it still the object that ran?) and whether it holds DWARF debug
 * information (a .debug_info or .zdebug_info section with contents). */
#ifndef DLT_ELFDEBUG_H
#define DLT_ELFDEBUG_H

#include "common/buildid.h"

typedef struct {
    char build_id[DLS_BUILD_ID_HEX]; /* lowercase hex; "" when the file has none */
    int debug_info;                  /* 1 when it has DWARF debug information */
} dlt_elf_debug;

/* Reads the facts of the file at path into *out. Returns 0, or -1 when it is not a regular file
 * holding a 64-bit little-endian ELF object whose headers lie inside it (then *out is zeroed).
 * The file is read with pread, every offset and size checked against its size; what is read is
 * bounded (the section headers, the section names and the notes, 1 MiB each at most). */
int dlt_elf_debug_read(const char *path, dlt_elf_debug *out);

#endif
