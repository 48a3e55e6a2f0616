/* Bindings: which wrapper stub stands for which profile row and which real function.
 *
 * Stub i (16 bytes each, laid out from dls_stubs, see trampoline.h) uses binding i. The first
 * bindings are the built-in rows (profiles.def order), each exported by the shim under the row's
 * own name; their real function is found lazily at the first call (resolve.h), again later if
 * it was not found and libraries were loaded since. The next DLS_POOL_SLOTS bindings are a pool
 * bound at run time to (row, real address) pairs by the dlsym hook: that is how rows read from
 * DLSYNC_PROFILES, and built-in names looked up by handle in an object other than the one the
 * exported stub resolved to, get wrapped. A preload library can only interpose names it
 * exports, and those are fixed when it is linked, so a DLSYNC_PROFILES row is wrapped only
 * when the program obtains the function through dlsym (ctypes, cffi, JNI and plugin loaders
 * do); calls bound by the dynamic linker to a name the shim does not export are not seen. */
#ifndef DLS_BINDINGS_H
#define DLS_BINDINGS_H

#include "profiles.h"

#include <stddef.h>

#define DLS_POOL_SLOTS 64
#define DLS_MAX_FILE_ROWS 64

typedef struct dls_binding dls_binding;

/* Binding of stub i, or NULL when i is out of range or a pool slot not bound yet. */
dls_binding *dls_binding_at(size_t i);

/* The binding's profile row (never NULL for a binding returned by dls_binding_at). */
const dls_profile *dls_binding_profile(const dls_binding *b);

/* The real function behind b, resolving it on first use; NULL when it cannot be found. *lib
 * gets the path of its object. Thread-safe; lock-free once resolved. */
void *dls_binding_real(dls_binding *b, const char **lib);

/* What the dlsym hook returns for `name` when the real dlsym gave `real` (non-NULL): the
 * wrapper stub bound to (row named `name`, real) when such a row exists, else real. When the
 * pool is full, warns once and returns real. */
void *dls_binding_wrap(const char *name, void *real);

/* Address of stub i. */
void *dls_stub_address(size_t i);

/* Reads DLSYNC_PROFILES (once; later calls do nothing). Each bad line is reported once with
 * its line number and skipped; rows naming a built-in symbol are skipped with a warning. */
void dls_bindings_init(void);

/* The rows read from DLSYNC_PROFILES and their number. */
const dls_profile *dls_file_rows(size_t *n);

#endif
