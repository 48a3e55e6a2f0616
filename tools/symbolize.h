/* Source lines for the native frames of logs, found offline by `dlsync report` (never in the
 * user's process).
 *
 * A frame is known by its object's path, its address in that object (the log's `native`
 * entries) and the object's build id. Its DWARF debug information is looked for in the object
 * itself, when the file at that path still has the build id the log names (or either has none),
 * then by build id under each debug directory, DIR/.build-id/xx/yyyy.debug (the directories
 * given, then /usr/lib/debug). The frames of one object are asked of one symbolizer process
 * (llvm-symbolizer, else addr2line, the first found on the PATH, as sanitizers do; 4,096
 * addresses a process at most), which gives each address its function, file and line, and the
 * chain of functions inlined there. Without a symbolizer on the PATH nothing is resolved and
 * one line says so; an object without debug information (stripped) stays unresolved, silently. */
#ifndef DLT_SYMBOLIZE_H
#define DLT_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One source frame of an address. */
typedef struct {
    char *function; /* demangled name, or NULL when the symbolizer did not know it */
    char *file;     /* source file as the debug information names it */
    long line;      /* 1-based, 0 when unknown */
} dlt_src_frame;

typedef struct dlt_symbolizer dlt_symbolizer;

/* A new symbolizer that searches the ndirs debug directories dirs (borrowed: they must outlive
 * it) before /usr/lib/debug. NULL when memory runs out. */
dlt_symbolizer *dlt_sym_new(const char *const *dirs, size_t ndirs);

/* Asks for the frame at offset in object (build_id: hex, NULL or "" when unknown). Returns 0, or
 * -1 when memory runs out. Repeated frames are asked once. */
int dlt_sym_want(dlt_symbolizer *s, const char *object, const char *build_id, uint64_t offset);

/* Resolves every frame asked for so far: finds each object's debug information and runs one
 * symbolizer per object. When frames with debug information are left unresolved because no
 * symbolizer is on the PATH, writes one line saying so to errs (NULL: silent) and remembers it
 * (dlt_sym_missing). */
void dlt_sym_resolve(dlt_symbolizer *s, FILE *errs);

/* The source frames of a frame asked for and resolved, innermost (inlined) first, the function
 * the address lies in last; *n their number. NULL (and *n 0) when it was not resolved. */
const dlt_src_frame *dlt_sym_find(const dlt_symbolizer *s, const char *object, const char *build_id, uint64_t offset,
                                  size_t *n);

/* 1 when dlt_sym_resolve found frames with debug information but no symbolizer on the PATH. */
int dlt_sym_missing(const dlt_symbolizer *s);

/* Frees s and everything it found; NULL is fine. */
void dlt_sym_free(dlt_symbolizer *s);

#endif
