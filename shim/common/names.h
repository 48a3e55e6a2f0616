/* Names the shim and the dlsync command share: the version, the DLSYNC_MODE names, the names of
 * the DLSYNC_* variables (options.def), the exit statuses of the command, and the log size
 * limit's syntax. Header only, libc only, so the command compiles it without the rest of the
 * shim. */
#ifndef DLS_NAMES_H
#define DLS_NAMES_H

#include <stdint.h>
#include <string.h>

#define DLS_VERSION "0.1.0"

/* Exit statuses of the dlsync command (the one list: `dlsync --help`, the man page and the
 * README say the same). `dlsync run` otherwise exits with the program's status, 128+N when a
 * signal N killed it; with --fail-on-race, a program that exited 0 turns into DLS_EXIT_RACE when
 * a race was reported (--error-exitcode N makes it N), else into DLS_EXIT_UNCHECKED when some
 * process of the run could not be checked as asked (no CUPTI observer, a log that could not be
 * written or was lost, a process dlsync did not enter or did not see end). */
#define DLS_EXIT_USAGE 2      /* bad command line */
#define DLS_EXIT_RACE 3       /* run --fail-on-race: a race was reported */
#define DLS_EXIT_UNCHECKED 4  /* run --fail-on-race: no race reported, but the run was not all checked */
#define DLS_EXIT_INTERNAL 125 /* run: dlsync itself failed before starting the program */
#define DLS_EXIT_NOEXEC 126   /* run: the program was found but could not be executed */
#define DLS_EXIT_NOTFOUND 127 /* run: the program was not found */

/* The name of the variable of options.def's row NAME (a string literal): DLS_VAR(MODE) is
 * "DLSYNC_MODE". tests/tool/test_tool_options.c checks that each NAME used is a row. */
#define DLS_VAR(NAME) "DLSYNC_" #NAME

/* DLSYNC_LOG_LIMIT's default: past this size a log gets no more exchange records. */
#define DLS_LOG_LIMIT_DEFAULT (64ull << 20)

/* Parses a size: decimal digits with an optional k, m or g (KiB, MiB, GiB; either case). 0 is
 * "no limit". Returns 0 and sets *out, or -1 when s is not such a size or overflows. */
static inline int dls_parse_size(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (!p || *p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    unsigned shift = 0;
    if (*p == 'k' || *p == 'K')
        shift = 10;
    else if (*p == 'm' || *p == 'M')
        shift = 20;
    else if (*p == 'g' || *p == 'G')
        shift = 30;
    if (shift)
        p++;
    if (*p != '\0' || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = v << shift;
    return 0;
}

/* 1 when s is a usable run identity: 1 to 64 letters, digits, '-', '_' or '.'. */
static inline int dls_run_id_valid(const char *s)
{
    size_t n = 0;
    for (; s && s[n]; n++) {
        char c = s[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return 0;
    }
    return n >= 1 && n <= 64;
}

/* X(enum suffix, name as written in DLSYNC_MODE and `dlsync run --mode`), in dls_mode order. */
#define DLS_MODES(X)                                                                     \
    X(OFF, "off")     /* wrappers pass straight through, nothing recorded */             \
    X(TRACE, "trace") /* record exchanges only */                                        \
    X(CHECK, "check") /* record and report unsynchronized uses; never change ordering */ \
    X(FIX, "fix")     /* default: make every exchanged tensor safe on its consumer stream */

#define DLS_MODE_NAME_(id, name) name,

/* The name of mode index m (a dls_mode value), or "?" when out of range. */
static inline const char *dls_mode_text(int m)
{
    static const char *const names[] = {DLS_MODES(DLS_MODE_NAME_)};
    return m >= 0 && m < (int)(sizeof names / sizeof *names) ? names[m] : "?";
}

/* The index of mode name `s` in DLS_MODES (a dls_mode value), or -1 when it is none. */
static inline int dls_mode_from_name(const char *s)
{
    static const char *const names[] = {DLS_MODES(DLS_MODE_NAME_)};
    for (int i = 0; s && i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

#undef DLS_MODE_NAME_

#endif
