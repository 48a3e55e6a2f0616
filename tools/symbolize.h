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
#ifndef DLS_TOOL_SYMBOLIZE_H
#define DLS_TOOL_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One source frame of an address. */
typedef struct {
    char *function; /* demangled name, or NULL when the symbolizer did not know it */
    char *file;     /* source file as the debug information names it */
    long line;      /* 1-based, 0 when unknown */
} dls_src_frame;

typedef struct dls_symbolizer dls_symbolizer;

/* A new symbolizer that searches the ndirs debug directories dirs (borrowed: they must outlive
 * it) before /usr/lib/debug. NULL when memory runs out. */
dls_symbolizer *dls_sym_new(const char *const *dirs, size_t ndirs);

/* Asks for the frame at offset in object (build_id: hex, NULL or "" when unknown). Returns 0, or
 * -1 when memory runs out. Repeated frames are asked once. */
int dls_sym_want(dls_symbolizer *s, const char *object, const char *build_id, uint64_t offset);

/* Resolves every frame asked for so far: finds each object's debug information and runs one
 * symbolizer per object. When frames with debug information are left unresolved because no
 * symbolizer is on the PATH, writes one line saying so to errs (NULL: silent) and remembers it
 * (dls_sym_missing). */
void dls_sym_resolve(dls_symbolizer *s, FILE *errs);

/* The source frames of a frame asked for and resolved, innermost (inlined) first, the function
 * the address lies in last; *n their number. NULL (and *n 0) when it was not resolved. */
const dls_src_frame *dls_sym_find(const dls_symbolizer *s, const char *object, const char *build_id, uint64_t offset,
                                  size_t *n);

/* 1 when dls_sym_resolve found frames with debug information but no symbolizer on the PATH. */
int dls_sym_missing(const dls_symbolizer *s);

/* The symbolizer dls_sym_resolve ran ("llvm-symbolizer", "addr2line"), or NULL when none. */
const char *dls_sym_tool(const dls_symbolizer *s);

/* Frees s and everything it found; NULL is fine. */
void dls_sym_free(dls_symbolizer *s);

#endif
