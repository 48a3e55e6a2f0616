/* Profiles: which framework entry points are wrapped, and where their tensor is.
 *
 * A profile row names one exported symbol (C or Itanium-mangled C++), its framework, its role
 * (export: hands a DLPack tensor out; import: takes one in), where the tensor pointer is (the
 * return value, a DLManagedTensor** out-parameter, an input argument, or a caller-owned DLTensor
 * the function fills: a non-owning export, as at::toDLPackNonOwning does; argument indices
 * count registers from 0 and include the hidden return slot the C++ ABI adds for a class
 * returned by value), and whether it is the DLPack 1.x versioned struct.
 *
 * Built-in rows come from profiles.def. Extra rows come from a text file (DLSYNC_PROFILES, and
 * what `dlsync scan` writes), one row per line, '#' starts a comment, fields separated by
 * blanks:
 *
 *     <exported-symbol> <framework> <export|import> <ret|out:N|arg:N|fill:N> <v0|v1>
 *
 * N is 0..5: only the six integer argument registers of x86-64 System V are supported. This
 * file depends on libc and report/advice.h (an enum) only, so tools can compile it on its own. */
#ifndef DLS_PROFILES_H
#define DLS_PROFILES_H

#include "../report/advice.h"

#include <stddef.h>

#define DLS_PROFILE_SYMBOL_MAX 256
#define DLS_PROFILE_FRAMEWORK_MAX 32
#define DLS_PROFILE_DISPLAY_MAX 128
#define DLS_PROFILE_MAX_ARG 5

typedef enum { DLS_ROLE_EXPORT = 0, DLS_ROLE_IMPORT = 1 } dls_role;

typedef enum {
    DLS_WHERE_RET = 0,  /* the return value is the tensor pointer */
    DLS_WHERE_OUT = 1,  /* argument `index` is a pointer to where the tensor pointer is stored */
    DLS_WHERE_ARG = 2,  /* argument `index` is the tensor pointer */
    DLS_WHERE_FILL = 3, /* argument `index` is a caller-owned DLTensor* the export fills (v0 only) */
} dls_where;

typedef struct {
    char symbol[DLS_PROFILE_SYMBOL_MAX];       /* exact exported name */
    char framework[DLS_PROFILE_FRAMEWORK_MAX]; /* e.g. "pytorch" */
    dls_role role;
    dls_where where;
    int index;                             /* argument register index for OUT/ARG, 0 for RET */
    int versioned;                         /* 1: DLManagedTensorVersioned, 0: DLManagedTensor */
    char display[DLS_PROFILE_DISPLAY_MAX]; /* human-readable name; "" for rows read from text */
    dls_xpath path;                        /* how an exchange through it happens: NATIVE for
                                                  every row of profiles.def and of text; the
                                                  capsule layer's rows say which capsule */
    int scalar;                            /* 1: the function passes no argument and no result in
                                              a vector register (every built-in row, from its
                                              signature); 0 when not known (text rows) */
} dls_profile;

/* Returns the built-in rows (never NULL) and stores their number in *n. Row i of this table is
 * the i-th entry of profiles.def; the table is constant for the life of the process. */
const dls_profile *dls_profiles_builtin(size_t *n);

/* Parses one text line into *out. Returns 1 when a row was parsed, 0 when the line is blank or
 * only a comment (out untouched), -1 on a malformed line, with a one-line reason in err (errlen
 * bytes, always NUL-terminated when errlen > 0). Never writes past the fields of *out. */
int dls_profile_parse_line(const char *line, dls_profile *out, char *err, size_t errlen);

/* Writes the text form of p (the format dls_profile_parse_line reads, no newline) into buf.
 * Returns the length it needed, like snprintf (the text is truncated when it does not fit). */
int dls_profile_format_line(const dls_profile *p, char *buf, size_t n);

/* Name to print for p: its display name, or its symbol when it has none. */
const char *dls_profile_name(const dls_profile *p);

#endif
