/* oracle TRACE [--all] [--bodies]: the reference's verdict on one cudasim trace
 * (tests/synth/oracle.h), with host order between calls, or between their bodies (--bodies: how
 * fix is judged).
 * Prints one line per exchange ("exchange <label>: <n> pairs, <k> not guaranteed (<kinds>)"), then
 * each pair not guaranteed (every pair with --all), then "pairs N unguaranteed K". Exits 0, or 2
 * when the trace cannot be judged. */
#include "oracle.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: oracle TRACE [--all] [--bodies]\n");
        return 2;
    }
    int all = 0;
    oracle_order order = ORACLE_CALL_ORDER;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0) {
            all = 1;
        } else if (strcmp(argv[i], "--bodies") == 0) {
            order = ORACLE_BODY_ORDER;
        } else {
            fprintf(stderr, "oracle: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    char err[512];
    oracle *o = oracle_read(argv[1], order, err, sizeof err);
    if (!o) {
        fprintf(stderr, "oracle: %s\n", err);
        return 2;
    }
    size_t nx, np, bad = 0;
    const oracle_exchange *x = oracle_exchanges(o, &nx);
    const oracle_pair *p = oracle_pairs(o, &np);
    for (size_t i = 0; i < nx; i++) {
        printf("exchange %s: %zu pairs, %u not guaranteed", x[i].label, x[i].npairs, x[i].unguaranteed);
        for (int k = 0; k < ORACLE_KINDS; k++)
            if (x[i].kinds & (1u << k))
                printf(" %s", oracle_kind_name((oracle_kind)k));
        printf("\n");
        for (size_t j = x[i].first_pair; j < x[i].first_pair + x[i].npairs; j++) {
            if (p[j].guaranteed && !all)
                continue;
            char a[256], b[256], actual[96];
            oracle_describe(o, p[j].a, a, sizeof a);
            oracle_describe(o, p[j].b, b, sizeof b);
            oracle_describe_actual(o, &p[j], actual, sizeof actual);
            printf("  %s %s: %s before %s; %s\n", oracle_kind_name(p[j].kind),
                   p[j].guaranteed ? "guaranteed" : "NOT guaranteed", a, b, actual);
        }
    }
    for (size_t j = 0; j < np; j++)
        bad += !p[j].guaranteed;
    oracle_stats s = oracle_get_stats(o);
    printf("pairs %zu unguaranteed %zu (ops %zu, calls %zu, sweeps %zu)\n", np, bad, s.ops, s.calls, s.passes);
    oracle_free(o);
    return 0;
}
