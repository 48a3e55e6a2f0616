/* The process's race suppressions: the rules of DLSYNC_SUPPRESSIONS (syntax in suppress.h), read
 * once at start-up, and the question a new race report asks of them.
 *
 * The texts a rule's pattern is matched against are those a report prints: each frame of the
 * producer's and the consumer's stacks ("function+0xOFF (library)", "library+0xOFF", or a Python
 * frame "file:line function"), the producer's framework and export symbol, and both operations
 * (kernel names, API names). A file that cannot be read, and each bad line (FILE:LINE: reason),
 * costs one warning; the good rules still apply. Read-only after start-up: lookups take no lock. */
#ifndef DLS_SUPPRESS_FILE_H
#define DLS_SUPPRESS_FILE_H

#include "suppress.h"

#include <stddef.h>

/* Reads DLSYNC_SUPPRESSIONS (nothing when unset). Called once by the shim's start-up. */
void dls_suppress_load(void);

/* The first rule that suppresses a race of kind `kind` (a dls_race_kind) with these texts, or
 * NULL. */
const dls_suppress_rule *dls_suppress_lookup(int kind, const char *const *texts, size_t n);

/* The absolute path of the suppressions file the rules came from ("" when none). */
const char *dls_suppress_path(void);

#endif
