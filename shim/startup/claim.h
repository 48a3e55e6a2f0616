/* Which copy of libdlsync.so works in a process that loaded more than one (an installed copy in
 * LD_PRELOAD beside a build tree's, a copy a program or a wheel dlopens): the first in the
 * loader's list of objects, since the program's calls of the functions every copy exports
 * (dlsym, dlopen, InitializeInjection, _exit) reach the first. A copy is any loaded object whose
 * DT_SONAME is libdlsync.so. Every other copy stays inert (the start-up file makes it so). */
#ifndef DLS_STARTUP_CLAIM_H
#define DLS_STARTUP_CLAIM_H

#include "../common/compiler.h"
#include <stddef.h>

/* 1 when this copy is the first libdlsync.so in the process (or the only one). 0 when another
 * copy comes first: its path is written into active (n bytes) and this copy's into self. Walks
 * the loaded objects (dl_iterate_phdr): call with no dlsync lock held. */
int dls_claim_first(char *active, char *self, size_t n) DLS_UNLOCKED;

#endif
