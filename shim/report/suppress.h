/* The syntax of race suppressions (DLSYNC_SUPPRESSIONS, `dlsync run --suppressions FILE`),
 * shared by the shim, the dlsync command (which refuses a bad file before the run) and the
 * fuzzer. libc only.
 *
 * One rule per line, as in ThreadSanitizer's suppression files:
 *     KIND:PATTERN
 * KIND is `race` (every kind) or one race kind (write-read, read-write, write-write, host-read,
 * release-reuse). PATTERN is matched against each text of a race (suppress_file.h says which:
 * the frames of both stacks as reports print them, the producer's framework and export, both
 * operations): it matches when it occurs anywhere in one of them; `*` matches any run of
 * characters, a leading `^` anchors it at the start of the text, a trailing `$` at its end.
 * Blank lines and lines whose first non-blank character is `#` are ignored; blanks around KIND
 * and PATTERN are dropped. A bad line (no `:`, an unknown kind, an empty pattern, a control
 * character, longer than DLS_SUPPRESS_MAX_LINE bytes) is reported with its line number and a
 * reason and skipped; at most DLS_SUPPRESS_MAX_RULES rules are kept. */
#ifndef DLS_SUPPRESS_H
#define DLS_SUPPRESS_H

#include <stddef.h>

#define DLS_SUPPRESS_MAX_LINE 1024
#define DLS_SUPPRESS_MAX_RULES 1024

typedef struct {
    int kind;      /* a dls_race_kind (report/race.h), or -1 for every kind (`race`) */
    char *pattern; /* owned: the pattern as written, anchors included */
    char *text;    /* owned: "KIND:PATTERN" as written, without the blanks around them */
    unsigned line; /* 1-based line number in the file */
} dls_suppress_rule;

typedef struct {
    dls_suppress_rule *rules;
    size_t n, cap;
} dls_suppress_set;

/* Parses text[0..len) as a suppressions file, appending each good rule to *set (zero-initialize
 * it before the first call) and calling bad(line, reason, ctx) for each bad line (bad may be
 * NULL). Returns the number of bad lines, or -1 when memory runs out. */
int dls_suppress_parse(const char *text, size_t len, dls_suppress_set *set,
                       void (*bad)(unsigned line, const char *reason, void *ctx), void *ctx);

/* Frees every rule of set and empties it. */
void dls_suppress_set_free(dls_suppress_set *set);

/* 1 when pattern (the syntax above) matches text, else 0. */
int dls_suppress_match(const char *pattern, const char *text);

/* The first rule of set whose kind is `kind` or every kind and whose pattern matches one of the
 * n texts (NULL entries are skipped); NULL when none does. */
const dls_suppress_rule *dls_suppress_first(const dls_suppress_set *set, int kind, const char *const *texts, size_t n);

#endif
