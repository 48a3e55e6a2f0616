/* Suppression rules: parsing and matching (see suppress.h). */
#include "suppress.h"

#include "race_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DLS_RACE_NAME_(id, name) name,
static const char *const g_kinds[] = {DLS_RACE_KINDS(DLS_RACE_NAME_)};
#undef DLS_RACE_NAME_

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* The kind index of the n bytes at s: -1 for "race", a dls_race_kind, or -2 when unknown. */
static int kind_of(const char *s, size_t n)
{
    if (n == 4 && memcmp(s, "race", 4) == 0)
        return -1;
    for (size_t i = 0; i < sizeof g_kinds / sizeof *g_kinds; i++)
        if (strlen(g_kinds[i]) == n && memcmp(s, g_kinds[i], n) == 0)
            return (int)i;
    return -2;
}

/* Appends a rule copied from the line's parts; -1 when memory runs out. */
static int add_rule(dls_suppress_set *set, int kind, const char *k, size_t kn, const char *p, size_t pn, unsigned line)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 16;
        dls_suppress_rule *r = realloc(set->rules, cap * sizeof *r);
        if (!r)
            return -1;
        set->rules = r;
        set->cap = cap;
    }
    char *pattern = malloc(pn + 1), *text = malloc(kn + pn + 2);
    if (!pattern || !text) {
        free(pattern);
        free(text);
        return -1;
    }
    memcpy(pattern, p, pn);
    pattern[pn] = '\0';
    snprintf(text, kn + pn + 2, "%.*s:%s", (int)kn, k, pattern);
    set->rules[set->n++] = (dls_suppress_rule){.kind = kind, .pattern = pattern, .text = text, .line = line};
    return 0;
}

/* Parses one line (without its newline). 1: a rule was added, 0: nothing on it, -1: bad (reason
 * in why), -2: out of memory. */
static int one_line(const char *s, size_t n, unsigned line, dls_suppress_set *set, char *why, size_t wn)
{
    if (n > DLS_SUPPRESS_MAX_LINE) {
        snprintf(why, wn, "line longer than %d bytes", DLS_SUPPRESS_MAX_LINE);
        return -1;
    }
    while (n && is_blank(*s))
        s++, n--;
    while (n && is_blank(s[n - 1]))
        n--;
    if (!n || *s == '#')
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 && s[i] != '\t') {
            snprintf(why, wn, "control character 0x%02x", (unsigned char)s[i]);
            return -1;
        }
    const char *colon = memchr(s, ':', n);
    if (!colon) {
        snprintf(why, wn, "expected KIND:PATTERN");
        return -1;
    }
    size_t kn = (size_t)(colon - s);
    while (kn && is_blank(s[kn - 1]))
        kn--;
    const char *p = colon + 1;
    size_t pn = n - (size_t)(p - s);
    while (pn && is_blank(*p))
        p++, pn--;
    int kind = kind_of(s, kn);
    if (kind == -2) {
        snprintf(why, wn,
                 "unknown kind '%.*s' (expected race, write-read, read-write, write-write, host-read or "
                 "release-reuse)",
                 (int)(kn > 64 ? 64 : kn), s);
        return -1;
    }
    if (!pn || (pn == 1 && (*p == '^' || *p == '$')) || (pn == 2 && p[0] == '^' && p[1] == '$')) {
        snprintf(why, wn, "empty pattern");
        return -1;
    }
    if (set->n >= DLS_SUPPRESS_MAX_RULES) {
        snprintf(why, wn, "more than %d rules", DLS_SUPPRESS_MAX_RULES);
        return -1;
    }
    return add_rule(set, kind, s, kn, p, pn, line) == 0 ? 1 : -2;
}

int dls_suppress_parse(const char *text, size_t len, dls_suppress_set *set,
                       void (*bad)(unsigned line, const char *reason, void *ctx), void *ctx)
{
    int nbad = 0;
    unsigned line = 0;
    for (size_t at = 0; at < len;) {
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + (nl != NULL);
        line++;
        char why[192];
        int rc = memchr(s, '\0', n) ? (snprintf(why, sizeof why, "NUL byte"), -1)
                                    : one_line(s, n, line, set, why, sizeof why);
        if (rc == -2)
            return -1;
        if (rc == -1) {
            nbad++;
            if (bad)
                bad(line, why, ctx);
        }
    }
    return nbad;
}

void dls_suppress_set_free(dls_suppress_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->rules[i].pattern);
        free(set->rules[i].text);
    }
    free(set->rules);
    memset(set, 0, sizeof *set);
}

/* Glob match of p[0..pn) ('*' only) against the whole of t: the classic backtracking to the
 * last star, linear in the usual case. */
static int glob(const char *p, size_t pn, const char *t)
{
    size_t i = 0, star = (size_t)-1;
    const char *mark = NULL;
    while (*t) {
        if (i < pn && p[i] == '*') {
            star = i++;
            mark = t;
        } else if (i < pn && p[i] == *t) {
            i++;
            t++;
        } else if (star != (size_t)-1) {
            i = star + 1;
            t = ++mark;
        } else {
            return 0;
        }
    }
    while (i < pn && p[i] == '*')
        i++;
    return i == pn;
}

int dls_suppress_match(const char *pattern, const char *text)
{
    size_t n = strlen(pattern);
    int start = n && pattern[0] == '^';
    int end = n > (size_t)start && pattern[n - 1] == '$';
    size_t pn = n - (size_t)start - (size_t)end;
    /* An unanchored side matches anywhere: a star there. */
    char local[DLS_SUPPRESS_MAX_LINE + 3];
    char *g = pn + 3 <= sizeof local ? local : malloc(pn + 3);
    if (!g)
        return 0;
    size_t k = 0;
    if (!start)
        g[k++] = '*';
    memcpy(g + k, pattern + start, pn);
    k += pn;
    if (!end)
        g[k++] = '*';
    int hit = glob(g, k, text);
    if (g != local)
        free(g);
    return hit;
}

const dls_suppress_rule *dls_suppress_first(const dls_suppress_set *set, int kind, const char *const *texts, size_t n)
{
    for (size_t r = 0; set && r < set->n; r++) {
        const dls_suppress_rule *rule = &set->rules[r];
        if (rule->kind != -1 && rule->kind != kind)
            continue;
        for (size_t i = 0; i < n; i++)
            if (texts[i] && dls_suppress_match(rule->pattern, texts[i]))
                return rule;
    }
    return NULL;
}
