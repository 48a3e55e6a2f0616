/* The generated-program tester: GEN_PROGRAMS programs (default 120, 6 under a sanitizer) from seed
 * GEN_SEED (default 1), each run plainly, under check and under fix with the simulator's trace on
 * (CUDASIM_TRACE), its jitter (CUDASIM_JITTER_US=10) and its seed (CUDASIM_SEED=<seed>), and
 * every run judged by the reference (judge.h, oracle.h) whatever its timing was. Then GEN_LOADERS
 * gen_loader programs (tests/synth/gen_loader.c: long data loaders, events made per item and handed
 * between busy threads; default 4, 1 under a sanitizer) from the same seed, of GEN_LOADER_ITEMS
 * items each (default 150; 0: each seed's length, 100 to 4,000), one in four racy (seed % 4 == 3),
 * two in three without jitter (seed % 3 != 0), judged the same way.
 *
 * Program <seed>: seeds 4k..4k+3 are gen_exchange programs (tests/synth/gen_exchange.c: each
 * thread its own producer and consumer, every stream kind, host synchronizations of every kind),
 * 4k+4..4k+7 gen_pipeline programs (gen_pipeline.c: loaders and consumers through a bounded host
 * queue, a pool of buffers recycled across threads, events recorded on one thread and waited for
 * on another, streams made per use, DLManagedTensor addresses reused); odd seeds racy, even
 * synced.
 *
 * Settings: GEN_MODES (a comma list of plain, check, fix; default all three; fix only under
 * ThreadSanitizer, where a racy run races for real), GEN_SHAPES (exchange, pipeline; default
 * both), GEN_JOBS (programs run at once, default 2), GEN_SHOW (failing runs described per job,
 * default 10), GEN_KEEP=1 (a failing run's trace and log are kept, and named), GEN_SYNCED_GATE
 * (1, the default: a synced program's fix run fails on each wait injected but one for host-visible
 * memory, judge.h, and gen_loader's check runs are judged at GEN_STRICT; 0: both counted and
 * printed only), GEN_STRICT (which of
 * the reference's verdicts on check fail their runs, judge.h: 0 none: they are counted in the
 * totals only; 1, the default, its false positives and the misses that the reference in body
 * order finds too, which check's callbacks could have seen, but not a host-read report of the
 * handover of a host read whose pages dlsync could not watch and that only another thread's host
 * wait after the import orders, which no tool blind to that load can know; 2 every one, the misses at a callback's edge too, see the README's
 * limitations). The reference's verdicts on fix (host
 * order between call bodies: what fix's callbacks saw), values read, the generator's own
 * verdicts (plain runs), lost deleters and double releases always fail.
 * A failure names the seed, the mode, what was wrong (the pair: its operations, streams,
 * threads, kinds) and the one command that replays the run. The totals: programs, runs and
 * pairs judged, unguaranteed pairs, check's false positives (by the kind dlsync reported; and the
 * host reads ordered only after the import) and
 * negatives (and of those, the ones body order finds too), fix's unguaranteed pairs and the waits
 * it injected per exchange (and in synced programs, per 10,000 exchanges), and the time taken; unguaranteed pairs a host wait ending during the later call would order (what dlsync's
 * callbacks may have seen), and those this run ordered only through a legacy-stream operation,
 * are counted apart (they still fail). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"
#include "judge.h"
#include "oracle.h"

#define JITTER_US 10

typedef struct {
    judge_totals t;
    long programs, failed_runs;
    double seconds[3]; /* per mode, summed over runs */
} totals;

static const char *const mode_name[] = {"plain", "check", "fix"};

static unsigned long env_ul(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoul(v, NULL, 0) : dflt;
}

/* 1 when the comma list in variable `name` (unset: everything) holds `what`. */
static int listed(const char *name, const char *what)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 1;
    size_t n = strlen(what);
    for (const char *p = v; (p = strstr(p, what)) != NULL; p += n)
        if ((p == v || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* One program to run: its generator, seed, class and, for gen_loader, its items (0: the seed's). */
typedef struct {
    const char *shape;
    unsigned long seed;
    int racy;
    long items;
    int jitter_us; /* the simulator's jitter (CUDASIM_JITTER_US) */
} program;

/* A set of programs: `count` from seed `first`, made by program_at. */
typedef struct {
    unsigned long first, count;
    int loaders; /* 0: gen_exchange and gen_pipeline; 1: gen_loader */
    long items;  /* gen_loader's --items (0: the seed's) */
} program_set;

static program program_at(const program_set *set, unsigned long i)
{
    unsigned long seed = set->first + i;
    if (set->loaders) /* one racy program in four; two in three without jitter, whose host calls follow
                         each other closest */
        return (program){"gen_loader", seed, seed % 4 == 3, set->items, seed % 3 ? 0 : JITTER_US};
    return (program){seed / 4 % 2 ? "gen_pipeline" : "gen_exchange", seed, (int)(seed % 2), 0, JITTER_US};
}

/* The synced gate (GEN_SYNCED_GATE, 1 unless set): 1, a synced program's fix run fails on each
 * wait injected but one for host-visible memory, and gen_loader's check runs are judged at
 * GEN_STRICT; 0, both are counted and printed only. */
static int synced_gate(void)
{
    return (int)env_ul("GEN_SYNCED_GATE", 1);
}

/* Runs program pg in mode m and judges it; appends a paragraph to out when it fails. */
static void run_one(const program *pg, judge_mode m, totals *tot, judge_text *out, int show)
{
    const char *shape = pg->shape, *cls = pg->racy ? "racy" : "synced";
    unsigned long seed = pg->seed;
    char prog[1024], shim[1024], preload[2048], rel[64], trace[64], logp[64];
    snprintf(rel, sizeof rel, "synth/%s", shape);
    dls_build_path(prog, sizeof prog, rel);
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(trace, sizeof trace, "/tmp/dls_gen_%d_%s_%lu_%s.trace", (int)getpid(), shape + 4, seed, mode_name[m]);
    snprintf(logp, sizeof logp, "/tmp/dls_gen_%d_%s_%lu_%s.jsonl", (int)getpid(), shape + 4, seed, mode_name[m]);
    unlink(logp);
    char e_jitter[64], e_trace[128], e_seed[64], e_pre[2100], e_mode[64], e_log[128], seedtxt[32], itemstxt[32],
        items[48] = "";
    snprintf(e_trace, sizeof e_trace, "CUDASIM_TRACE=%s", trace);
    snprintf(e_seed, sizeof e_seed, "CUDASIM_SEED=%lu", seed);
    snprintf(e_pre, sizeof e_pre, "LD_PRELOAD=%s", m == JUDGE_PLAIN ? "" : preload);
    snprintf(e_mode, sizeof e_mode, "DLSYNC_MODE=%s", m == JUDGE_PLAIN ? "" : mode_name[m]);
    snprintf(e_log, sizeof e_log, "DLSYNC_LOG=%s", m == JUDGE_PLAIN ? "" : logp);
    snprintf(seedtxt, sizeof seedtxt, "%lu", seed);
    snprintf(itemstxt, sizeof itemstxt, "%ld", pg->items);
    if (pg->items)
        snprintf(items, sizeof items, " --items %ld", pg->items);
    const char *argv[] = {prog, seedtxt, cls, pg->items ? "--items" : NULL, itemstxt, NULL};
    snprintf(e_jitter, sizeof e_jitter, "CUDASIM_JITTER_US=%d", pg->jitter_us);
    const char *env[] = {e_jitter,
                         e_seed,
                         e_trace,
                         e_pre,
                         e_mode,
                         e_log,
                         m == JUDGE_CHECK ? "DLSYNC_KERNEL_PAIRS=1" : "DLSYNC_KERNEL_PAIRS=",
                         NULL};
    double t0 = dls_now_ns();
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    tot->seconds[m] += (dls_now_ns() - t0) / 1e9;
    judge_text why = {0};
    int reads = 0, wrong = 0, failures = 0, exports = 0;
    unsigned long released = 0;
    const char *line = strstr(r.out, "reads "), *ex = strstr(r.out, "exports ");
    if (r.status != 0 || !line || sscanf(line, "reads %d wrong %d", &reads, &wrong) != 2 || !ex ||
        sscanf(ex, "exports %d released %lu", &exports, &released) != 2) {
        judge_printf(&why, "  exit status %d\n%s%s", r.status, r.out, r.err);
        failures = 1;
    } else {
        char err[512];
        char *text = dls_read_file(trace); /* read once: check judges it in both orders */
        if (!text)
            snprintf(err, sizeof err, "cannot open %s", trace);
        oracle *o =
            text ? oracle_parse(text, m == JUDGE_FIX ? ORACLE_BODY_ORDER : ORACLE_CALL_ORDER, err, sizeof err) : NULL;
        oracle *bodies = m == JUDGE_CHECK && o ? oracle_parse(text, ORACLE_BODY_ORDER, err, sizeof err) : NULL;
        free(text);
        char *log = m == JUDGE_PLAIN ? NULL : dls_read_file(logp);
        if (!o) {
            judge_printf(&why, "  the reference cannot judge the trace: %s\n", err);
            failures = 1;
        } else {
            int gate = synced_gate(), strict = (int)env_ul("GEN_STRICT", 1);
            judge_program jp = {.strict_check = strcmp(shape, "gen_loader") == 0 && !gate ? 0 : strict,
                                .strict_waits = gate,
                                .synced = !pg->racy,
                                .wrong_reads = wrong,
                                .lost_deleters = exports - (int)released,
                                .bodies = bodies};
            failures = judge_run(o, log ? log : "", m, &jp, &tot->t, &why, 6);
        }
        oracle_free(o);
        oracle_free(bodies);
        free(log);
    }
    int keep = failures && getenv("GEN_KEEP");
    if (failures) {
        tot->failed_runs++;
        if (tot->failed_runs <= show) {
            judge_printf(out, "program %lu (%s %s) under %s: %d failure%s\n%s", seed, shape, cls, mode_name[m],
                         failures, failures == 1 ? "" : "s", why.text ? why.text : "");
            if (failures > 6)
                judge_printf(out, "  (and %d more)\n", failures - 6);
            judge_printf(out, "  replay: CUDASIM_JITTER_US=%d CUDASIM_SEED=%lu CUDASIM_TRACE=/tmp/trace.txt ",
                         pg->jitter_us, seed);
            if (m != JUDGE_PLAIN)
                judge_printf(out, "LD_PRELOAD=%s DLSYNC_MODE=%s DLSYNC_LOG=/tmp/log.jsonl %s", preload, mode_name[m],
                             m == JUDGE_CHECK ? "DLSYNC_KERNEL_PAIRS=1 " : "");
            judge_printf(out, "%s %lu %s%s --print && %s/synth/oracle /tmp/trace.txt%s\n", prog, seed, cls, items,
                         DLS_BUILD_DIR, m == JUDGE_FIX ? " --bodies" : "");
            if (keep)
                judge_printf(out, "  kept: %s%s%s\n", trace, m == JUDGE_PLAIN ? "" : " ", m == JUDGE_PLAIN ? "" : logp);
        }
    }
    if (!keep) {
        unlink(trace);
        unlink(logp);
    }
    free(why.text);
    dls_run_free(&r);
}

/* Runs the set's programs job + k*jobs (k = 0, 1, ...). */
static void run_share(const program_set *set, int job, int jobs, const int *modes, totals *tot, judge_text *out)
{
    int show = (int)env_ul("GEN_SHOW", 10);
    for (unsigned long i = (unsigned long)job; i < set->count; i += (unsigned long)jobs) {
        program pg = program_at(set, i);
        if (!listed("GEN_SHAPES", pg.shape + 4))
            continue;
        tot->programs++;
        for (int m = 0; m < 3; m++)
            if (modes[m])
                run_one(&pg, (judge_mode)m, tot, out, show);
    }
}

static void add(totals *a, const totals *b)
{
    long *x = (long *)&a->t;
    const long *y = (const long *)&b->t;
    for (size_t i = 0; i < sizeof a->t / sizeof(long); i++)
        x[i] += y[i];
    a->programs += b->programs;
    a->failed_runs += b->failed_runs;
    for (int m = 0; m < 3; m++)
        a->seconds[m] += b->seconds[m];
}

/* Per 10,000 of `of`. */
static double per_10k(long n, long of)
{
    return of ? 1e4 * (double)n / (double)of : 0.0;
}

/* Runs and judges a set of programs, prints the totals, fails when a run failed. */
static void judge_set(const program_set *set)
{
    unsigned long first = set->first, n = set->count;
    int jobs = (int)env_ul("GEN_JOBS", 2);
    jobs = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
    int modes[3];
    for (int m = 0; m < 3; m++) /* under ThreadSanitizer a racy run races for real: fix only */
        modes[m] = listed("GEN_MODES", mode_name[m]) && (m == JUDGE_FIX || !strstr(DLS_SAN, "thread"));
    print_message("%lu %s programs from seed %lu, %d at once, modes%s%s%s\n", n,
                  set->loaders ? "gen_loader" : "gen_exchange and gen_pipeline", first, jobs, modes[0] ? " plain" : "",
                  modes[1] ? " check" : "", modes[2] ? " fix" : "");
    double t0 = dls_now_ns();
    totals all = {0};
    int pipes[64][2];
    pid_t pids[64];
    for (int j = 0; j < jobs; j++) { /* each job reports its totals, then its failures, on a pipe */
        assert_int_equal(pipe(pipes[j]), 0);
        fflush(NULL);
        pids[j] = fork();
        assert_true(pids[j] >= 0);
        if (pids[j] == 0) {
            close(pipes[j][0]);
            totals t = {0};
            judge_text out = {0};
            run_share(set, j, jobs, modes, &t, &out);
            FILE *f = fdopen(pipes[j][1], "w");
            fwrite(&t, sizeof t, 1, f);
            if (out.len)
                fwrite(out.text, 1, out.len, f);
            fclose(f);
            _exit(0);
        }
        close(pipes[j][1]);
    }
    judge_text failures = {0};
    for (int j = 0; j < jobs; j++) {
        FILE *f = fdopen(pipes[j][0], "r");
        totals t = {0};
        assert_int_equal(fread(&t, sizeof t, 1, f), 1);
        add(&all, &t);
        char buf[4096];
        for (size_t k; (k = fread(buf, 1, sizeof buf, f)) > 0;)
            judge_printf(&failures, "%.*s", (int)k, buf);
        fclose(f);
        int status;
        waitpid(pids[j], &status, 0);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    double secs = (dls_now_ns() - t0) / 1e9;
    const judge_totals *t = &all.t;
    if (failures.len) { /* print_message's buffer is too small for it */
        fwrite(failures.text, 1, failures.len, stdout);
        fflush(stdout);
    }
    print_message("%ld programs, %ld runs in %.1f s (%d at once; summed run time plain %.1f s, check %.1f s, fix "
                  "%.1f s)\n",
                  all.programs, t->runs, secs, jobs, all.seconds[0], all.seconds[1], all.seconds[2]);
    print_message("pairs judged %ld; plain runs: %ld unguaranteed\n", t->pairs, t->unguaranteed);
    print_message(
        "check: %ld exchanges (%ld with unguaranteed pairs): %ld false positives (exchanges; %ld host reads "
        "that only another thread's host wait after the import orders, %ld host accesses caught on "
        "protected pages), %ld false negatives (exchange and "
        "kind; %ld in exchanges with no race record at all, %ld ordered by a host wait that ended during the "
        "later call, %ld unguaranteed in body order too, %ld host reads), %ld racy exchanges also reported with "
        "another "
        "kind\n",
        t->check_exchanges, t->check_racy_exchanges, t->check_fp, t->check_fp_import, t->check_fp_pages, t->check_fn,
        t->check_fn_exchange, t->check_fn_window, t->check_fn_seen, t->check_fn_host, t->check_other_kind);
    if (t->check_fp) {
        print_message("check: false positives by the kind of their first race record:");
        for (int k = 0; k < JUDGE_DLSYNC_KINDS; k++)
            if (t->check_fp_kind[k])
                print_message(" %s %ld", judge_dlsync_kind[k], t->check_fp_kind[k]);
        print_message("\n");
    }
    print_message("fix: %ld exchanges, %ld pairs, %ld unguaranteed (%ld ordered by a host wait that ended during the "
                  "later call, %ld ordered in the run only through a legacy-stream operation); %ld waits injected "
                  "(%.2f per exchange)\n",
                  t->fix_exchanges, t->fix_pairs, t->fix_unguaranteed, t->fix_window, t->fix_legacy, t->fix_injected,
                  t->fix_exchanges ? (double)t->fix_injected / (double)t->fix_exchanges : 0.0);
    print_message("synced programs under fix: %ld waits injected in %ld exchanges (%.1f per 10,000; %ld for "
                  "host-visible memory), which the programs did not need%s; check: %.1f false positives per 10,000 "
                  "exchanges\n",
                  t->fix_synced_injected, t->fix_synced_exchanges,
                  per_10k(t->fix_synced_injected, t->fix_synced_exchanges), t->fix_synced_host,
                  synced_gate() ? "" : " (GEN_SYNCED_GATE=0: counted, not failed)",
                  per_10k(t->check_fp, t->check_exchanges));
    print_message("wrong reads where none may be: %ld; deleter calls lost: %ld; double_release records: %ld; "
                  "failed runs: %ld\n",
                  t->wrong_reads, t->lost_deleters, t->double_releases, all.failed_runs);
    free(failures.text);
    if (all.failed_runs)
        fail_msg("%ld of %ld runs failed (above: the first of each job, with the command that replays each)",
                 all.failed_runs, t->runs);
}

static void generated_programs_are_judged_by_the_reference(void **state)
{
    (void)state;
    program_set set = {.first = env_ul("GEN_SEED", 1), .count = env_ul("GEN_PROGRAMS", *DLS_SAN ? 6 : 120)};
    judge_set(&set);
}

/* gen_loader's programs: GEN_LOADERS of them (default 4, 1 under a sanitizer) from GEN_SEED, of
 * GEN_LOADER_ITEMS items each (default 150; 0: each seed's length, 100 to 4,000). */
static void long_loaders_are_judged_by_the_reference(void **state)
{
    (void)state;
    if (!listed("GEN_SHAPES", "loader"))
        skip();
    program_set set = {.first = env_ul("GEN_SEED", 1),
                       .count = env_ul("GEN_LOADERS", *DLS_SAN ? 1 : 4),
                       .loaders = 1,
                       .items = (long)env_ul("GEN_LOADER_ITEMS", 150)};
    judge_set(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generated_programs_are_judged_by_the_reference),
        cmocka_unit_test(long_loaders_are_judged_by_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
