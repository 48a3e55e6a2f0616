/* Benchmark of the happens-before engine. Prints figures, asserts nothing.
 *
 *   bench_hb                     all figures: ns/op medians for operations that bring no new
 *                                ordering (few vs 1,000 streams), for operations that
 *                                synchronize through events, and (when valgrind is installed)
 *                                callgrind instructions per operation
 *   bench_hb --scenario S --ops N [--streams K]
 *                                sets up and runs N operations of scenario S (op, sync) in
 *                                measured_loop(), for
 *     valgrind --tool=callgrind --toggle-collect=measured_loop --callgrind-out-file=/dev/null \
 *         bench_hb --scenario op --ops 100000
 *                                whose "Collected" count divided by N is instructions per op. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hb/hb.h"

enum { OP, SYNC };

typedef struct {
    dls_hb *e;
    int scenario;
    uint32_t streams;
    uint64_t now; /* host stamps: each call after the previous one */
    volatile uint64_t sink;
} bench;

/* The stamps of the next call, made after every earlier one. */
static dls_hb_when serial(bench *b)
{
    b->now++;
    return (dls_hb_when){b->now, b->now};
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Streams 1..K are blocking streams of context 1, whose legacy stream (id 0) stays idle, so
 * an operation brings no new ordering. */
static int setup(bench *b, int scenario, uint32_t streams)
{
    memset(b, 0, sizeof *b);
    b->scenario = scenario;
    b->streams = streams;
    b->e = dls_hb_create();
    if (!b->e || dls_hb_stream_add(b->e, 0, 1, DLS_HB_LEGACY) != 0)
        return -1;
    for (uint32_t s = 1; s <= streams; s++)
        if (dls_hb_stream_add(b->e, s, 1, DLS_HB_BLOCKING) != 0)
            return -1;
    return dls_hb_op(b->e, 1, 1, serial(b), NULL) != 0 ? -1 : 0;
}

__attribute__((noinline)) static void measured_loop(bench *b, uint64_t ops)
{
    uint32_t s = 1;
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t pos = 0;
        if (b->scenario == OP) {
            dls_hb_op(b->e, 7, s, serial(b), &pos);
        } else {
            /* Stream s records an event that the next stream waits on: every wait brings new
             * ordering, so each one joins a clock. */
            uint32_t t = s == b->streams ? 1 : s + 1;
            dls_hb_op(b->e, 7, s, serial(b), NULL);
            dls_hb_event_record(b->e, 7, s, s, serial(b), NULL);
            dls_hb_event_wait(b->e, 7, t, s, serial(b), &pos);
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
static double median_ns(int scenario, uint32_t streams, uint64_t ops)
{
    double t[7];
    bench b;
    if (setup(&b, scenario, streams) != 0) {
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

static const char *const names[] = {"op", "sync"};

/* Instructions per operation counted by callgrind, or -1 when valgrind is unavailable. */
static double callgrind_per_op(const char *self, int scenario, uint32_t streams, uint64_t ops)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=callgrind --toggle-collect=measured_loop --callgrind-out-file=/dev/null "
             "'%s' --scenario %s --ops %llu --streams %u 2>&1",
             self, names[scenario], (unsigned long long)ops, streams);
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

int main(int argc, char **argv)
{
    int scenario = -1;
    uint64_t ops = 0;
    uint32_t streams = 4;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--scenario") == 0) {
            for (int s = 0; s < 2; s++)
                if (strcmp(argv[i + 1], names[s]) == 0)
                    scenario = s;
        } else if (strcmp(argv[i], "--ops") == 0) {
            ops = strtoull(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--streams") == 0) {
            streams = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        }
    }
    if (argc > 1) {
        bench b;
        if (scenario < 0 || ops == 0 || streams < 2 || setup(&b, scenario, streams) != 0) {
            fprintf(stderr, "usage: bench_hb [--scenario op|sync --ops N [--streams K>=2]]\n");
            return 2;
        }
        double t0 = now_ns();
        measured_loop(&b, ops);
        printf("%s: %.1f ns/op\n", names[scenario], (now_ns() - t0) / (double)ops);
        dls_hb_destroy(b.e);
        return 0;
    }

    printf("operation bringing no new ordering (ns/op, median of 7 x 1M):\n");
    double few = median_ns(OP, 4, 1000000), many = median_ns(OP, 1000, 1000000);
    printf("  %5u streams: %6.1f ns/op\n  %5u streams: %6.1f ns/op  (x%.2f)\n", 4u, few, 1000u, many, many / few);
    printf("event record + wait chain across streams (ns per record+wait+op triple, median of 7 x 100k):\n");
    double s4 = median_ns(SYNC, 4, 100000), s1000 = median_ns(SYNC, 1000, 100000);
    printf("  %5u streams: %8.1f ns\n  %5u streams: %8.1f ns  (x%.2f: each wait joins a clock)\n", 4u, s4, 1000u, s1000,
           s1000 / s4);
    if (!have_valgrind()) {
        printf("callgrind: valgrind not installed, instruction counts skipped\n");
        return 0;
    }
    printf("callgrind instructions per operation (measured_loop only):\n");
    static const struct {
        int scenario;
        uint32_t streams;
        uint64_t ops;
    } cg[] = {{OP, 4, 200000}, {OP, 1000, 200000}, {SYNC, 4, 20000}, {SYNC, 1000, 20000}};
    for (size_t i = 0; i < sizeof cg / sizeof cg[0]; i++)
        printf("  %-4s %5u streams: %8.1f instructions/op\n", names[cg[i].scenario], cg[i].streams,
               callgrind_per_op(argv[0], cg[i].scenario, cg[i].streams, cg[i].ops));
    printf("measured with: [valgrind --tool=callgrind --toggle-collect=measured_loop] build/bench/bench_hb "
           "--scenario op|sync --ops N --streams K\n");
    return 0;
}
