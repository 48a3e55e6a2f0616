/* The GNU build id of an ELF object (an NT_GNU_BUILD_ID note), read from its notes. The one
 * reader for both places that need it: the shim reads the notes of a loaded object in memory
 * (report/objinfo.c), `dlsync report` reads them from the object's file (tools/elfdebug.c).
 * The C library and <elf.h> only, so the command builds without the CUDA headers. */
#ifndef DLS_BUILDID_H
#define DLS_BUILDID_H

#include <stddef.h>

#define DLS_BUILD_ID_MAX 32                         /* bytes of a build id kept (GNU ld writes 20: SHA-1) */
#define DLS_BUILD_ID_HEX (2 * DLS_BUILD_ID_MAX + 1) /* its lowercase hex, NUL included */

/* Writes the build id found among the ELF notes at p[0..size) as lowercase hex into hex
 * (DLS_BUILD_ID_HEX bytes; a longer id is cut to its first DLS_BUILD_ID_MAX bytes); returns 1
 * when one was found, 0 otherwise (then hex is unchanged). align is the alignment of the segment
 * or section that holds the notes: 8 means 8-byte aligned notes, anything else 4. Every note
 * header and size is checked against size; p needs no alignment. Thread-safe. */
int dls_build_id_from_notes(const unsigned char *p, size_t size, size_t align, char *hex);

#endif
