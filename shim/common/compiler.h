/* Compiler attributes and hints, named once for the shim (GCC and clang).
 *
 * A hint that steers code generation (likely/unlikely, inlining, cold) is kept only where a
 * figure of `make bench` shows what it buys; the comment at its use says which. Visibility is
 * in export.h. */
#ifndef DLS_COMPILER_H
#define DLS_COMPILER_H

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

#endif
