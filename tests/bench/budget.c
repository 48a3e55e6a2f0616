/* The budgets' verdict lines and the verdict of a run of the benchmarks (see budget.h). */
#include "budget.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *key, *bench, *figure;
    double most;
} budget;

static const budget g_budgets[] = {
#define DLS_BUDGET_ROW_(id, key, bench, figure, most) {key, bench, figure, most},
    DLS_BUDGETS(DLS_BUDGET_ROW_)
#undef DLS_BUDGET_ROW_
};

#define WITHIN ": within budget"
#define OVER ": OVER budget"

dls_budget_verdict dls_budget_line(char *buf, size_t n, dls_budget_id id, double value)
{
    const budget *b = &g_budgets[id];
    if (value < 0) {
        snprintf(buf, n, "budget %s (%s): not measured, budget %.0f", b->key, b->figure, b->most);
        return DLS_BUDGET_UNMEASURED;
    }
    dls_budget_verdict v = value <= b->most ? DLS_BUDGET_WITHIN : DLS_BUDGET_OVER;
    snprintf(buf, n, "budget %s (%s): %.0f instructions, budget %.0f%s", b->key, b->figure, value, b->most,
             v == DLS_BUDGET_WITHIN ? WITHIN : OVER);
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
    char start[128];
    snprintf(start, sizeof start, "budget %s (", g_budgets[id].key);
    *value = -1;
    for (const char *p = strstr(text, start); p; p = strstr(p + 1, start)) {
        if (p != text && p[-1] != ' ' && p[-1] != '\n')
            continue;
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *figure = strstr(p, "): ");
        if (!figure || figure > p + len || sscanf(figure + 3, "%lf instructions", value) != 1)
            return DLS_BUDGET_UNMEASURED;
        if (ends_with(p, len, WITHIN))
            return DLS_BUDGET_WITHIN;
        return ends_with(p, len, OVER) ? DLS_BUDGET_OVER : DLS_BUDGET_UNMEASURED;
    }
    return DLS_BUDGET_UNMEASURED;
}

/* Appends to buf (size n, holding *len bytes) the formatted text, as far as it fits. */
static void append(char *buf, size_t n, size_t *len, const char *what, const budget *b, double value)
{
    if (*len >= n)
        return;
    int k = value < 0 ? snprintf(buf + *len, n - *len, "%s%s %s", what, b->bench, b->key)
                      : snprintf(buf + *len, n - *len, "%s%s %s %.0f > %.0f", what, b->bench, b->key, value, b->most);
    *len += k > 0 ? (size_t)k : 0;
}

int dls_budget_verdict_of(const char *text, char *buf, size_t n)
{
    unsigned count[3] = {0, 0, 0};
    dls_budget_verdict verdicts[DLS_BUDGET_COUNT];
    double values[DLS_BUDGET_COUNT];
    for (int i = 0; i < DLS_BUDGET_COUNT; i++)
        count[verdicts[i] = verdict_in(text, (dls_budget_id)i, &values[i])]++;
    if (count[DLS_BUDGET_WITHIN] == DLS_BUDGET_COUNT) {
        snprintf(buf, n, "bench: all %d figures within budget", DLS_BUDGET_COUNT);
        return 0;
    }
    size_t len = (size_t)snprintf(buf, n, "bench: %u of %d figures OVER budget, %u not measured, %u within budget",
                                  count[DLS_BUDGET_OVER], DLS_BUDGET_COUNT, count[DLS_BUDGET_UNMEASURED],
                                  count[DLS_BUDGET_WITHIN]);
    const char *sep = " (";
    for (int i = 0; i < DLS_BUDGET_COUNT; i++) {
        if (verdicts[i] == DLS_BUDGET_WITHIN)
            continue;
        append(buf, n, &len, sep, &g_budgets[i], verdicts[i] == DLS_BUDGET_OVER ? values[i] : -1);
        sep = "; ";
    }
    if (len + 1 < n)
        snprintf(buf + len, n - len, ")");
    return 1;
}
