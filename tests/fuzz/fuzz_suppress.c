/* libFuzzer harness: the suppressions parser and matcher (shim/report/suppress.c). The input is a
 * suppressions file. Properties: no crash or leak; every rule kept has a known kind, a pattern
 * that fits a line and the line number of a line of the input; each bad line is reported once
 * with a reason; no more rules than the limit; and every rule's pattern matches its own literal
 * text (the pattern without its stars and anchors), tried against each line of the input too. */
#include "report/race.h"
#include "report/suppress.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int bad;
    unsigned last;
} seen;

static void bad_line(unsigned line, const char *reason, void *ctx)
{
    seen *s = ctx;
    if (!reason || !reason[0] || line == 0 || line <= s->last)
        abort();
    s->last = line;
    s->bad++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    const char *text = (const char *)data;
    unsigned lines = 1;
    for (size_t i = 0; i + 1 < n; i++)
        lines += data[i] == '\n';
    dls_suppress_set set = {0};
    seen s = {0};
    int bad = dls_suppress_parse(text, n, &set, bad_line, &s);
    if (bad >= 0 && bad != s.bad)
        abort();
    if (set.n > DLS_SUPPRESS_MAX_RULES)
        abort();
    char *line = malloc(n + 1);
    for (size_t r = 0; r < set.n && line; r++) {
        const dls_suppress_rule *rule = &set.rules[r];
        size_t pn = strlen(rule->pattern);
        if (rule->kind < -1 || rule->kind >= DLS_RACE_N_ || !pn || pn > DLS_SUPPRESS_MAX_LINE || rule->line < 1 ||
            rule->line > lines || !strstr(rule->text, rule->pattern))
            abort();
        /* the literal text of the pattern */
        size_t start = rule->pattern[0] == '^', end = pn > start && rule->pattern[pn - 1] == '$';
        char *lit = malloc(pn + 1);
        size_t k = 0;
        for (size_t i = start; i < pn - end; i++)
            if (rule->pattern[i] != '*')
                lit[k++] = rule->pattern[i];
        lit[k] = '\0';
        if (!dls_suppress_match(rule->pattern, lit))
            abort();
        free(lit);
        /* and every line of the input as a text: no crash */
        for (size_t at = 0; at < n;) {
            const char *nl = memchr(text + at, '\n', n - at);
            size_t len = nl ? (size_t)(nl - (text + at)) : n - at;
            memcpy(line, text + at, len);
            line[len] = '\0';
            (void)dls_suppress_match(rule->pattern, line);
            at += len + 1;
        }
    }
    free(line);
    dls_suppress_set_free(&set);
    return 0;
}
