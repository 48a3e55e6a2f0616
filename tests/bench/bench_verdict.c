/* bench_verdict: reads the output of the benchmarks on standard input and prints the one-line
 * verdict of the budgets (budget.h); exits 0 when every figure is within its budget, else 1.
 * `make bench` ends with it (scripts/run-bench.sh). */
#include "budget.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    size_t len = 0, cap = 1 << 16;
    char *text = malloc(cap);
    size_t k;
    while (text && (k = fread(text + len, 1, cap - len - 1, stdin)) > 0) {
        len += k;
        char *more = len + 1 == cap ? realloc(text, cap *= 2) : text;
        if (!more)
            free(text);
        text = more;
    }
    if (!text) {
        fputs("bench_verdict: out of memory\n", stderr);
        return 1;
    }
    text[len] = '\0';
    char verdict[2048];
    int rc = dls_budget_verdict_of(text, verdict, sizeof verdict);
    puts(verdict);
    free(text);
    return rc;
}
