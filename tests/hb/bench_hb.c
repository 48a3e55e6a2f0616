/* Benchmark of the happens-before engine. Prints figures, asserts nothing.
 *
 *   bench_hb                     all figures: ns/op medians for operations touching no range
 *                                (few vs 1,000 streams, 0 vs 100,000 ranges), for operations
 *                                that synchronize through events, for access queries against
 *                                1,000 .. 100,000 ranges, bytes per tracked range, and (when
 *                                valgrind is installed) callgrind instructions per operation
 *   bench_hb --scenario S --ops N [--streams K] [--ranges R]
 *                                sets up and runs N operations of scenario S (no-range, sync,
 *                                query) in measured_loop(), for
 *     valgrind --tool=callgrind --toggle-collect=measured_loop --callgrind-out-file=/dev/null \
 *         bench_hb --scenario no-range --ops 100000
 *                                whose "Collected" count divided by N is instructions per op. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hb/hb.h"
#include "hb/hb_ranges.h"

enum { NO_RANGE, SYNC, QUERY };

typedef struct {
    dls_hb *e;
    int scenario;
    uint32_t streams;
    uint32_t ranges;
    uint64_t rng;
    volatile uint64_t sink;
} bench;

static uint64_t next(bench *b)
{
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    return b->rng;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Streams 1..K are blocking streams of context 1, whose legacy stream (id 0) stays idle, so
 * an operation brings no new ordering; ranges are 4 KiB tensors at random 4 KiB-aligned
 * addresses, each written once by stream 1. */
static int setup(bench *b, int scenario, uint32_t streams, uint32_t ranges)
{
    memset(b, 0, sizeof *b);
    b->scenario = scenario;
    b->streams = streams;
    b->ranges = ranges;
    b->rng = 0x2545F4914F6CDD1DULL;
    b->e = dls_hb_create();
    if (!b->e || dls_hb_stream_add(b->e, 0, 1, DLS_HB_LEGACY) != 0)
        return -1;
    for (uint32_t s = 1; s <= streams; s++)
        if (dls_hb_stream_add(b->e, s, 1, DLS_HB_BLOCKING) != 0)
            return -1;
    if (dls_hb_op(b->e, 1, 1, 1, NULL) != 0)
        return -1;
    for (uint32_t i = 0; i < ranges; i++) {
        uint64_t lo = (next(b) % (1ULL << 36)) & ~4095ULL, h;
        if (dls_hb_track(b->e, lo, lo + 4096, &h) != 0 || dls_hb_access(b->e, 1, h, DLS_HB_WRITE) != 0)
            return -1;
    }
    return 0;
}

__attribute__((noinline)) static void measured_loop(bench *b, uint64_t ops)
{
    uint32_t s = 1;
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t pos = 0;
        if (b->scenario == NO_RANGE) {
            dls_hb_op(b->e, 7, s, i, &pos);
        } else if (b->scenario == SYNC) {
            /* Stream s records an event that the next stream waits on: every wait brings new
             * ordering, so each one joins a clock. */
            uint32_t t = s == b->streams ? 1 : s + 1;
            dls_hb_op(b->e, 7, s, i, NULL);
            dls_hb_event_record(b->e, 7, s, s, i, NULL);
            dls_hb_event_wait(b->e, 7, t, s, i, &pos);
        } else {
            uint64_t lo = (next(b) % (1ULL << 36)) & ~4095ULL;
            dls_hb_epoch w[4];
            size_t n = 0;
            dls_hb_waits(b->e, 7, 2, lo, lo + 4096, DLS_HB_READ, w, 4, &n);
            pos = n;
        }
        b->sink += pos;
        s = s == b->streams ? 1 : s + 1;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median over 7 runs of ns per operation. */
static double median_ns(int scenario, uint32_t streams, uint32_t ranges, uint64_t ops)
{
    double t[7];
    bench b;
    if (setup(&b, scenario, streams, ranges) != 0) {
        fprintf(stderr, "bench_hb: setup failed\n");
        exit(1);
    }
    measured_loop(&b, ops / 10); /* warm up */
    for (int r = 0; r < 7; r++) {
        double t0 = now_ns();
        measured_loop(&b, ops);
        t[r] = (now_ns() - t0) / (double)ops;
    }
    dls_hb_destroy(b.e);
    qsort(t, 7, sizeof t[0], cmp_double);
    return t[3];
}

static const char *const names[] = {"no-range", "sync", "query"};

/* Instructions per operation counted by callgrind, or -1 when valgrind is unavailable. */
static double callgrind_per_op(const char *self, int scenario, uint32_t streams, uint32_t ranges,
                               uint64_t ops)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=callgrind --toggle-collect=measured_loop --callgrind-out-file=/dev/null "
             "'%s' --scenario %s --ops %llu --streams %u --ranges %u 2>&1",
             self, names[scenario], (unsigned long long)ops, streams, ranges);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512];
    double collected = -1;
    while (fgets(line, sizeof line, p)) {
        const char *c = strstr(line, "Collected :");
        if (c)
            collected = strtod(c + strlen("Collected :"), NULL);
    }
    pclose(p);
    return collected < 0 ? -1 : collected / (double)ops;
}

static int have_valgrind(void)
{
    return system("valgrind --version >/dev/null 2>&1") == 0;
}

static void memory_per_range(uint32_t ranges)
{
    bench b;
    if (setup(&b, NO_RANGE, 4, ranges) != 0)
        exit(1);
    double one = (double)dls_hb_range_bytes(b.e) / ranges;
    dls_hb_destroy(b.e);
    printf("memory per tracked range (%u ranges, one write each):  %.1f bytes "
           "(pooled node of %zu bytes: interval, links, two inline accesses)\n",
           ranges, one, sizeof(dls_hb_rnode));
}

int main(int argc, char **argv)
{
    int scenario = -1;
    uint64_t ops = 0;
    uint32_t streams = 4, ranges = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--scenario") == 0) {
            for (int s = 0; s < 3; s++)
                if (strcmp(argv[i + 1], names[s]) == 0)
                    scenario = s;
        } else if (strcmp(argv[i], "--ops") == 0) {
            ops = strtoull(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--streams") == 0) {
            streams = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--ranges") == 0) {
            ranges = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        }
    }
    if (argc > 1) {
        bench b;
        if (scenario < 0 || ops == 0 || streams < 2 || setup(&b, scenario, streams, ranges) != 0) {
            fprintf(stderr, "usage: bench_hb [--scenario no-range|sync|query --ops N "
                            "[--streams K>=2] [--ranges R]]\n");
            return 2;
        }
        double t0 = now_ns();
        measured_loop(&b, ops);
        printf("%s: %.1f ns/op\n", names[scenario], (now_ns() - t0) / (double)ops);
        dls_hb_destroy(b.e);
        return 0;
    }

    printf("operation touching no tracked range (ns/op, median of 7 x 1M):\n");
    double base = 0;
    static const uint32_t cfg[][2] = {{4, 0}, {1000, 0}, {4, 100000}, {1000, 100000}};
    for (int i = 0; i < 4; i++) {
        double ns = median_ns(NO_RANGE, cfg[i][0], cfg[i][1], 1000000);
        if (i == 0)
            base = ns;
        printf("  %5u streams, %6u ranges: %6.1f ns/op  (x%.2f)\n", cfg[i][0], cfg[i][1], ns, ns / base);
    }
    printf("event record + wait chain across streams (ns per record+wait+op triple, median of 7 x 100k):\n");
    double s4 = median_ns(SYNC, 4, 0, 100000), s1000 = median_ns(SYNC, 1000, 0, 100000);
    printf("  %5u streams: %8.1f ns\n  %5u streams: %8.1f ns  (x%.2f: each wait joins a clock)\n", 4u,
           s4, 1000u, s1000, s1000 / s4);
    printf("access query (dls_hb_waits on a 4 KiB interval, ns/query, median of 7 x 200k):\n");
    double q1 = 0;
    static const uint32_t qr[] = {1000, 10000, 100000};
    for (int i = 0; i < 3; i++) {
        double ns = median_ns(QUERY, 4, qr[i], 200000);
        if (i == 0)
            q1 = ns;
        printf("  %6u ranges: %6.1f ns/query  (x%.2f)\n", qr[i], ns, ns / q1);
    }
    memory_per_range(100000);
    if (!have_valgrind()) {
        printf("callgrind: valgrind not installed, instruction counts skipped\n");
        return 0;
    }
    printf("callgrind instructions per operation (measured_loop only):\n");
    static const struct {
        int scenario;
        uint32_t streams, ranges;
        uint64_t ops;
    } cg[] = {{NO_RANGE, 4, 0, 200000},   {NO_RANGE, 1000, 100000, 200000}, {SYNC, 4, 0, 20000},
              {SYNC, 1000, 0, 20000},     {QUERY, 4, 1000, 20000},          {QUERY, 4, 100000, 20000}};
    for (size_t i = 0; i < sizeof cg / sizeof cg[0]; i++)
        printf("  %-8s %5u streams, %6u ranges: %8.1f instructions/op\n", names[cg[i].scenario],
               cg[i].streams, cg[i].ranges,
               callgrind_per_op(argv[0], cg[i].scenario, cg[i].streams, cg[i].ranges, cg[i].ops));
    printf("measured with: [valgrind --tool=callgrind --toggle-collect=measured_loop] build/bench/bench_hb "
           "--scenario no-range|sync|query --ops N --streams K --ranges R\n");
    return 0;
}
