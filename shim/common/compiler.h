/* Compiler attributes and hints, named once for the shim (GCC and clang).
 *
 * A hint that steers code generation (likely/unlikely, inlining, cold) is kept only where a
 * figure of `make bench` shows what it buys; the comment at its use says which. Visibility is
 * in export.h. */
#ifndef DLS_COMPILER_H
#define DLS_COMPILER_H

#include "export.h"

/* Branch hint: the condition is almost always false. */
#define DLS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* A function kept out of line (DLS_NOINLINE), or also placed with the rarely run code and
 * optimized for size (DLS_COLD). */
#define DLS_NOINLINE __attribute__((noinline))
#define DLS_COLD __attribute__((noinline, cold))

/* A printf-like function: argument `fmt` is the format, the values start at argument `first`. */
#define DLS_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))

/* A type whose objects may be read and written whatever the type of the memory they alias (a
 * word-by-word copy of a struct). */
#define DLS_MAY_ALIAS __attribute__((may_alias))

/* A function no sanitizer instruments: it runs while a sanitizer's runtime is still starting
 * (the loader hooks, which the runtime's own dlsym calls reach). */
#define DLS_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

/* Lock contracts, checked by clang's thread-safety analysis (-Wthread-safety, the clang build)
 * and empty under other compilers. A lock's type is a capability (DLS_CAPABILITY, mutex.h,
 * spin.h); a function that takes or releases one says so (DLS_ACQUIRE, DLS_RELEASE,
 * DLS_TRY_ACQUIRE: the value returned on success, then the locks), one that needs it held says
 * DLS_REQUIRES, and one that must not run while it is held DLS_EXCLUDES. DLS_UNLOCKED marks the
 * calls dlsync never makes under one of its own locks: CUDA, CUPTI and the dynamic loader (the
 * rule of docs/architecture.md's "Locks"); every lock of the shim also holds dls_any_lock
 * (mutex.h) while it is held. DLS_GUARDED_BY marks a variable only read and written under lock l.
 * DLS_NO_LOCK_ANALYSIS exempts the body of a function (a lock wrapper) from the analysis. */
#if defined(__clang__)
#define DLS_LOCK_ATTR_(...) __attribute__((__VA_ARGS__))
#else
#define DLS_LOCK_ATTR_(...)
#endif
#define DLS_CAPABILITY(kind) DLS_LOCK_ATTR_(capability(kind))
#define DLS_ACQUIRE(...) DLS_LOCK_ATTR_(acquire_capability(__VA_ARGS__))
#define DLS_RELEASE(...) DLS_LOCK_ATTR_(release_capability(__VA_ARGS__))
#define DLS_TRY_ACQUIRE(...) DLS_LOCK_ATTR_(try_acquire_capability(__VA_ARGS__))
#define DLS_REQUIRES(...) DLS_LOCK_ATTR_(requires_capability(__VA_ARGS__, dls_any_lock))
#define DLS_EXCLUDES(...) DLS_LOCK_ATTR_(locks_excluded(__VA_ARGS__))
#define DLS_GUARDED_BY(l) DLS_LOCK_ATTR_(guarded_by(l))
#define DLS_NO_LOCK_ANALYSIS DLS_LOCK_ATTR_(no_thread_safety_analysis)
#define DLS_UNLOCKED DLS_EXCLUDES(dls_any_lock)

/* "Some dlsync lock is held": a capability every lock of the shim takes with its own and that no
 * object stands behind (it is named in attributes only, so nothing defines it). */
typedef struct DLS_CAPABILITY("lock") dls_lock_role dls_lock_role;
extern dls_lock_role dls_any_lock DLS_HIDDEN;

#endif
