/* Whether the dynamic loader will load libdlsync.so into the program `dlsync run` starts: a
 * static program, a set-user-ID or set-group-ID one, or one with file capabilities ignores
 * LD_PRELOAD (a script is judged by its #! interpreter). Said before the program runs, so the
 * run can tell why that process was not checked. */
#ifndef DLS_TOOL_PROGRAM_H
#define DLS_TOOL_PROGRAM_H

#include <stddef.h>

/* Finds name as execvp does: a name with a '/' is used as it is, else the first executable
 * regular file of that name in PATH (/bin:/usr/bin when PATH is unset). 0 with the path in buf
 * (n bytes), -1 when there is none (execvp will say why). */
int dls_program_find(const char *name, char *buf, size_t n);

/* NULL when LD_PRELOAD applies to the program at path, or when that cannot be told; else writes
 * why it does not into why (n bytes) and returns why. */
const char *dls_program_unreachable(const char *path, char *why, size_t n);

#endif
