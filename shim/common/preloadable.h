/* Whether the dynamic loader will load LD_PRELOAD's libraries into a program: shared by the
 * shim (before an exec or spawn of one of its processes, startup/follow.h) and the dlsync
 * command (before `dlsync run` starts its program). libc only; nothing here allocates or takes a
 * lock, so it may run in a vfork child.
 *
 * It does not when the program (a script's #! interpreter, up to four levels) is statically
 * linked (its ELF program headers have no PT_INTERP), is set-user-ID or set-group-ID, or has file
 * capabilities (the loader's secure mode ignores LD_PRELOAD paths). */
#ifndef DLS_PRELOADABLE_H
#define DLS_PRELOADABLE_H

#include <stddef.h>

/* Finds name as execvp does: a name with a '/' as it is, else the first executable regular file
 * of that name in `path` (a PATH value; NULL: /bin:/usr/bin). 0 with the file in buf (n bytes),
 * -1 when there is none. */
int dls_program_find(const char *name, const char *path, char *buf, size_t n);

/* NULL when LD_PRELOAD applies to the program at path, or when that cannot be told (it cannot be
 * read); else a reason ("it is statically linked: ..."), a static string, with the file it is
 * about (the program, or the interpreter of a script) in file (n bytes). */
const char *dls_program_unreachable(const char *path, char *file, size_t n);

#endif
