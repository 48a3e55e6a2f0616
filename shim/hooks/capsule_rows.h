/* The profile rows of exchanges that no profile row names: those seen through Python capsules
 * (capsule.h) and DLPack C exchange API tables (exchange_api.h).
 *
 * Such an exchange is named after the object that made it: its framework from a table of path
 * fragments (numpy, jax, cupy, tensorflow, paddle, torch, tvm_ffi, tvm, mxnet, ...), else the
 * object's file name. One row is made per (object, display name, role, version) on first use and
 * lives for the process. A capsule hook finds its caller's row by the caller's return address:
 * the loader is asked once per call site (dladdr), then a hash slot finds it, or a scan of the
 * known call sites when another took the slot. Thread-safe: rows and call sites are made under a
 * leaf mutex and read lock-free; no loader call is made under it. */
#ifndef DLS_CAPSULE_ROWS_H
#define DLS_CAPSULE_ROWS_H

#include "profiles.h"

#include <stddef.h>

/* The framework name for the object at `path` (the table above), written into buf (n bytes);
 * returns buf. */
const char *dls_capsule_framework(const char *path, char *buf, size_t n);

/* The profile row standing for exchanges of one kind (`display`, e.g. PyCapsule_New("dltensor"),
 * `path` the way of exchanging for the fix line) made by the object at `lib`, named after it:
 * made on first use, the same row afterwards; NULL, with one warning, when the table of such rows
 * is full. Takes a leaf lock; no loader call. */
const dls_profile *dls_capsule_row(const char *lib, const char *display, dls_role role, dls_where where, int versioned,
                                   dls_xpath path);

/* The row of a DLPack capsule made (role EXPORT: PyCapsule_New) or consumed (IMPORT:
 * PyCapsule_SetName) by the code at return address `caller`, for a versioned capsule or not; *lib
 * gets the path of the caller's object. NULL when the table of rows is full. Calls dladdr the
 * first time a call site is seen: never under a dlsync lock. */
const dls_profile *dls_capsule_row_of_caller(const void *caller, dls_role role, int versioned, const char **lib);

#endif
