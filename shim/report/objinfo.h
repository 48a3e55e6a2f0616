/* What an offline symbolizer needs to know of a loaded object (`dlsync report` turns a native
 * frame into file:line with it): the object's path, and its GNU build id, which finds its debug
 * information when the object itself has none (/usr/lib/debug/.build-id/xx/yyyy.debug) and tells
 * whether the file found at report time is still the one that ran.
 *
 * The build id is read from the object's PT_NOTE segments in memory (NT_GNU_BUILD_ID), as
 * dl_iterate_phdr lists them, once per object: the answers are cached (a small table, oldest
 * replaced first). Only report paths call this (race reports, after the policy's lock): no
 * dlsync lock is held across dl_iterate_phdr, and the table's own lock is never held across it.
 * An object of another link-map namespace (dlmopen), which dl_iterate_phdr does not list from
 * here, has no build id. */
#ifndef DLS_OBJINFO_H
#define DLS_OBJINFO_H

#include "../common/compiler.h"
#include "../common/buildid.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char path[256];                  /* the object's path; the executable's real path for the main program */
    char build_id[DLS_BUILD_ID_HEX]; /* lowercase hex, "" when it has none or it could not be read */
} dls_objinfo;

/* Fills *out for the object that holds the address pc, loaded with load bias `bias` and named
 * `name` by the loader (its link map's l_name: "" for the main program). Thread-safe; never fails
 * (what cannot be found stays ""). */
void dls_objinfo_get(uintptr_t pc, uintptr_t bias, const char *name, dls_objinfo *out) DLS_UNLOCKED;

#endif
