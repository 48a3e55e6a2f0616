/* The budgets' verdict lines and the verdict of a run of the benchmarks (see budget.h). */
#include "budget.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *key, *bench, *figure, *unit;
    double most;
    dls_budget_class class_;
} budget;

static const budget g_budgets[] = {
#define DLS_BUDGET_ROW_(id, key, bench, figure, unit, most, class) {key, bench, figure, unit, most, class},
    DLS_BUDGETS(DLS_BUDGET_ROW_)
#undef DLS_BUDGET_ROW_
};

/* What a line says of its figure, by class: its first word, the word before the most, and the
 * endings of a figure within and over. */
static const struct {
    const char *word, *within, *over;
} g_says[] = {
    [DLS_HELD] = {"budget", ": within budget", ": OVER budget"},
    [DLS_GOAL] = {"goal", ": goal met", ": goal not yet met"},
};

/* Decimals a figure in `unit` is written with: instructions are whole, the others have one. */
static int decimals(const char *unit)
{
    return strcmp(unit, DLS_INSTR) == 0 ? 0 : 1;
}

dls_budget_verdict dls_budget_line(char *buf, size_t n, dls_budget_id id, double value)
{
    const budget *b = &g_budgets[id];
    const char *word = g_says[b->class_].word;
    int d = decimals(b->unit);
    if (value < 0) {
        snprintf(buf, n, "%s %s (%s): not measured, %s %.*f", word, b->key, b->figure, word, d, b->most);
        return DLS_BUDGET_UNMEASURED;
    }
    dls_budget_verdict v = value <= b->most ? DLS_BUDGET_WITHIN : DLS_BUDGET_OVER;
    snprintf(buf, n, "%s %s (%s): %.*f %s, %s %.*f%s", word, b->key, b->figure, d, value, b->unit, word, d, b->most,
             v == DLS_BUDGET_WITHIN ? g_says[b->class_].within : g_says[b->class_].over);
    return v;
}

dls_budget_verdict dls_budget_print(dls_budget_id id, double value)
{
    char line[512];
    dls_budget_verdict v = dls_budget_line(line, sizeof line, id, value);
    printf("  %s\n", line);
    return v;
}

/* 1 when the len bytes at p end with `end`. */
static int ends_with(const char *p, size_t len, const char *end)
{
    size_t k = strlen(end);
    return len >= k && strncmp(p + len - k, end, k) == 0;
}

/* The verdict of figure id in text, and in *value the figure as its line gives it (-1 when not
 * measured). */
static dls_budget_verdict verdict_in(const char *text, dls_budget_id id, double *value)
{
    const budget *b = &g_budgets[id];
    char start[128], unit[64];
    snprintf(start, sizeof start, "%s %s (", g_says[b->class_].word, b->key);
    snprintf(unit, sizeof unit, " %s, ", b->unit);
    *value = -1;
    for (const char *p = strstr(text, start); p; p = strstr(p + 1, start)) {
        if (p != text && p[-1] != ' ' && p[-1] != '\n')
            continue;
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *figure = strstr(p, "): ");
        int used = 0;
        if (!figure || figure > p + len || sscanf(figure + 3, "%lf%n", value, &used) != 1 ||
            strncmp(figure + 3 + used, unit, strlen(unit)) != 0) {
            *value = -1;
            return DLS_BUDGET_UNMEASURED;
        }
        if (ends_with(p, len, g_says[b->class_].within))
            return DLS_BUDGET_WITHIN;
        return ends_with(p, len, g_says[b->class_].over) ? DLS_BUDGET_OVER : DLS_BUDGET_UNMEASURED;
    }
    return DLS_BUDGET_UNMEASURED;
}

/* Appends to buf (size n, holding *len bytes) the formatted text, as far as it fits. */
static void append(char *buf, size_t n, size_t *len, const char *what, const budget *b, double value)
{
    if (*len >= n)
        return;
    int d = decimals(b->unit);
    int k = value < 0
                ? snprintf(buf + *len, n - *len, "%s%s %s", what, b->bench, b->key)
                : snprintf(buf + *len, n - *len, "%s%s %s %.*f > %.*f", what, b->bench, b->key, d, value, d, b->most);
    *len += k > 0 ? (size_t)k : 0;
}

/* Appends to buf the figures of class c whose verdict is not within, each after `sep` (the first
 * after `first`), then `close` when there was one. */
static void append_misses(char *buf, size_t n, size_t *len, dls_budget_class c, const dls_budget_verdict *verdicts,
                          const double *values, const char *first, const char *close)
{
    const char *sep = first;
    for (int i = 0; i < DLS_BUDGET_COUNT; i++) {
        if (g_budgets[i].class_ != c || verdicts[i] == DLS_BUDGET_WITHIN)
            continue;
        append(buf, n, len, sep, &g_budgets[i], verdicts[i] == DLS_BUDGET_OVER ? values[i] : -1);
        sep = "; ";
    }
    if (sep != first && *len + 1 < n) {
        int k = snprintf(buf + *len, n - *len, "%s", close);
        *len += k > 0 ? (size_t)k : 0;
    }
}

int dls_budget_verdict_of(const char *text, char *buf, size_t n)
{
    unsigned count[2][3] = {{0, 0, 0}, {0, 0, 0}}, of[2] = {0, 0};
    dls_budget_verdict verdicts[DLS_BUDGET_COUNT];
    double values[DLS_BUDGET_COUNT];
    for (int i = 0; i < DLS_BUDGET_COUNT; i++) {
        dls_budget_class c = g_budgets[i].class_;
        count[c][verdicts[i] = verdict_in(text, (dls_budget_id)i, &values[i])]++;
        of[c]++;
    }
    size_t len;
    if (count[DLS_HELD][DLS_BUDGET_WITHIN] == of[DLS_HELD])
        len = (size_t)snprintf(buf, n, "bench: all %u figures within budget", of[DLS_HELD]);
    else
        len = (size_t)snprintf(buf, n, "bench: %u of %u figures OVER budget, %u not measured, %u within budget",
                               count[DLS_HELD][DLS_BUDGET_OVER], of[DLS_HELD], count[DLS_HELD][DLS_BUDGET_UNMEASURED],
                               count[DLS_HELD][DLS_BUDGET_WITHIN]);
    append_misses(buf, n, &len, DLS_HELD, verdicts, values, " (", ")");
    if (of[DLS_GOAL] && len < n) {
        int k = snprintf(buf + len, n - len, "; goals met: %u of %u", count[DLS_GOAL][DLS_BUDGET_WITHIN], of[DLS_GOAL]);
        len += k > 0 ? (size_t)k : 0;
        if (count[DLS_GOAL][DLS_BUDGET_UNMEASURED] && len < n) {
            k = snprintf(buf + len, n - len, ", %u not measured", count[DLS_GOAL][DLS_BUDGET_UNMEASURED]);
            len += k > 0 ? (size_t)k : 0;
        }
        append_misses(buf, n, &len, DLS_GOAL, verdicts, values, " (not yet: ", ")");
    }
    return count[DLS_HELD][DLS_BUDGET_WITHIN] == of[DLS_HELD] && !count[DLS_GOAL][DLS_BUDGET_UNMEASURED] ? 0 : 1;
}
