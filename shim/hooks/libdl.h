/* The C library's dlsym, dlvsym, dlopen, dlmopen and dlclose, looked up once each, for the shim's
 * own use (never the hooks) and for the loader hooks' way through to the C library.
 * ATTENTION: the bottom of hooks/: this file and libdl.c include no other header of the shim but
 * compiler.h and export.h, and call nothing in it. */
#ifndef DLS_LIBDL_H
#define DLS_LIBDL_H

#include "../common/compiler.h"
#include "../common/export.h"

typedef void *(*dls_dlsym_fn)(void *handle, const char *name);

/* The C library's dlsym (dlvsym(RTLD_NEXT, "dlsym", GLIBC_2.34, then GLIBC_2.2.5)); NULL only
 * when neither exists. Resolved once; thread-safe; allocation-free after the first call; not
 * instrumented by sanitizers (the dlsym entry calls it while a sanitizer runtime is still
 * starting). */
dls_dlsym_fn dls_real_dlsym_fn(void);

/* The C library's functions, for the shim's own use (never the hooks). NULL when missing. */
void *dls_real_dlopen(const char *file, int mode) DLS_UNLOCKED;
void *dls_real_dlmopen(long lmid, const char *file, int mode) DLS_UNLOCKED;

/* The C library's dlopen, dlmopen and dlvsym as addresses, for the assembly entries
 * (x86_64/loader.S) and the loader hooks. */
DLS_NO_SANITIZE DLS_HIDDEN void *dls_real_dlopen_fn(void);
DLS_NO_SANITIZE DLS_HIDDEN void *dls_real_dlmopen_fn(void);
DLS_NO_SANITIZE DLS_HIDDEN void *dls_real_dlvsym_fn(void);

typedef int (*dls_dlclose_fn)(void *);

/* The C library's dlclose; NULL when missing. */
dls_dlclose_fn dls_real_dlclose_fn(void);

#endif
