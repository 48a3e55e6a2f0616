/* Unit tests of the log (shim/report/log.c): path expansion (%p, %r, %% and overflow), the rank
 * variables' order; records written by many threads at once stay whole lines with their own
 * thread's ids; a timestamp written from a thread's remembered second is the clock's value, also
 * when the second changes; and end to end: a preloaded scenario writes its log to the expanded
 * path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/config.h"
#include "dls_test.h"
#include "report/log.h"

static char g_log[256]; /* this process's own log, opened by the first test that records */

/* Opens this process's log (once; it stays open) and returns its text so far (malloc'd). */
static char *own_log(void)
{
    if (!g_log[0]) {
        snprintf(g_log, sizeof g_log, "/tmp/dls_test_log.%d.jsonl", (int)getpid());
        unlink(g_log);
        setenv("DLSYNC_LOG", g_log, 1);
        setenv("DLSYNC_MODE", "trace", 1);
        dls_config_reset_for_tests();
    }
    assert_true(dls_log_enabled());
    char *text = dls_read_file(g_log);
    assert_non_null(text);
    return text;
}

/* The value of the member `"key":N` in line, which must have one. */
static unsigned long long member(const char *line, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(line, pattern);
    assert_non_null(p);
    return strtoull(p + strlen(pattern), NULL, 10);
}

/* The text of the member `"t":N` in line; it must be the decimal form of a number in [lo, hi]. */
static void assert_time_between(const char *line, uint64_t lo, uint64_t hi)
{
    unsigned long long t = member(line, "t");
    char want[32];
    const char *at = strstr(line, "\"t\":");
    snprintf(want, sizeof want, "\"t\":%llu,", t);
    assert_memory_equal(at, want, strlen(want)); /* no leading zeros, nothing dropped */
    assert_true(t >= lo && t <= hi);
}

#define THREADS 8
#define RECORDS 400

static char g_filler[9000]; /* 'x' up to the NUL at its end */

static void *log_records(void *arg)
{
    long k = (long)arg;
    for (int i = 0; i < RECORDS; i++) {
        dls_rec j;
        dls_log_begin(&j, "warning");
        dls_rec_i64(&j, "thread", k);
        dls_rec_i64(&j, "seq", i);
        dls_rec_i64(&j, "own_tid", (int64_t)syscall(SYS_gettid));
        /* lengths up to twice the first buffer: records grow the thread's buffer */
        dls_rec_str(&j, "detail", g_filler + sizeof g_filler - 1 - (size_t)((i * 37 + k * 101) % 8500));
        dls_log_write(&j);
    }
    return NULL;
}

static void records_of_many_threads_stay_whole_lines(void **state)
{
    (void)state;
    free(own_log());
    memset(g_filler, 'x', sizeof g_filler - 1);
    uint64_t before = dls_log_now_ns();
    pthread_t th[THREADS];
    for (long k = 0; k < THREADS; k++)
        assert_int_equal(pthread_create(&th[k], NULL, log_records, (void *)k), 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    uint64_t after = dls_log_now_ns();
    char *text = own_log();
    int next[THREADS] = {0};
    int lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "\"ev\":\"warning\""))
            continue;
        lines++;
        assert_memory_equal(line, "{\"ev\":\"warning\",\"t\":", 19);
        assert_int_equal(line[strlen(line) - 1], '}');
        unsigned long long k = member(line, "thread"), i = member(line, "seq");
        assert_true(k < THREADS);
        assert_int_equal(i, next[k]); /* a thread's records in its order, none lost */
        next[k]++;
        assert_int_equal(member(line, "tid"), member(line, "own_tid"));
        assert_int_equal(member(line, "pid"), getpid());
        assert_time_between(line, before, after);
        const char *detail = strstr(line, "\"detail\":\"");
        assert_non_null(detail);
        size_t n = strspn(detail + 10, "x");
        assert_int_equal(n, (i * 37 + k * 101) % 8500);
        assert_string_equal(detail + 10 + n, "\"}");
    }
    assert_int_equal(lines, THREADS * RECORDS);
    free(text);
}

/* A record of kind "tick" with only the keys every line has. */
static void tick(void)
{
    dls_rec j;
    dls_log_begin(&j, "tick");
    dls_log_write(&j);
}

static void a_timestamp_is_the_clock_across_a_change_of_second(void **state)
{
    (void)state;
    free(own_log());
    uint64_t t0 = dls_log_now_ns();
    tick(); /* the thread's second is remembered here */
    uint64_t t1 = dls_log_now_ns();
    while (dls_log_now_ns() / 1000000000u == t1 / 1000000000u)
        usleep(20000);
    uint64_t t2 = dls_log_now_ns();
    tick(); /* a new second: its digits are made again */
    tick();
    uint64_t t3 = dls_log_now_ns();
    char *text = own_log();
    char *ticks[3];
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strstr(line, "\"ev\":\"tick\"") && n < 3)
            ticks[n++] = line;
    assert_int_equal(n, 3);
    assert_time_between(ticks[0], t0, t1);
    assert_time_between(ticks[1], t2, t3);
    assert_time_between(ticks[2], member(ticks[1], "t"), t3);
    free(text);
}

static void pid_rank_and_percent_are_expanded(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(dls_log_expand_path("/tmp/run.%p.%r.jsonl", 4242, "3", 0, buf, sizeof buf), 0);
    assert_string_equal(buf, "/tmp/run.4242.3.jsonl");
    assert_int_equal(dls_log_expand_path("/tmp/run.%p.%n.jsonl", 4242, "3", 17, buf, sizeof buf), 0);
    assert_string_equal(buf, "/tmp/run.4242.17.jsonl");
    assert_int_equal(dls_log_expand_path("a%%p-%r", 1, NULL, 0, buf, sizeof buf), 0);
    assert_string_equal(buf, "a%p-norank"); /* no launcher rank: a name that says so */
    assert_int_equal(dls_log_expand_path("plain%x%", 1, NULL, 0, buf, sizeof buf), 0);
    assert_string_equal(buf, "plain%x%");
}

static void a_path_that_does_not_fit_is_refused(void **state)
{
    (void)state;
    char buf[8];
    assert_int_equal(dls_log_expand_path("1234567", 1, NULL, 0, buf, sizeof buf), 0);
    assert_int_equal(dls_log_expand_path("12345678", 1, NULL, 0, buf, sizeof buf), -1);
    assert_int_equal(dls_log_expand_path("x%p", 123456789, NULL, 0, buf, sizeof buf), -1);
}

static void rank_variables_are_read_in_launcher_order(void **state)
{
    (void)state;
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"};
    for (int i = 0; i < 4; i++)
        unsetenv(vars[i]);
    assert_null(dls_log_rank());
    setenv("RANK", "9", 1);
    assert_string_equal(dls_log_rank(), "9");
    setenv("SLURM_PROCID", "5", 1);
    assert_string_equal(dls_log_rank(), "5");
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    assert_string_equal(dls_log_rank(), "2");
    setenv("OMPI_COMM_WORLD_RANK", "", 1);
    assert_string_equal(dls_log_rank(), "5");
    for (int i = 0; i < 4; i++)
        unsetenv(vars[i]);
}

/* A real process under the shim: its exchanges land in log.<its pid>.<rank>.jsonl. */
static void a_preloaded_process_logs_to_the_expanded_path(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-logpath-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char prog[512], shim[512], pv[1100], preload[1200], log[600], cupti[600];
    dls_build_path(prog, sizeof prog, "scenarios/scen_side_stream");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, shim));
    snprintf(log, sizeof log, "DLSYNC_LOG=%s/log.%%p.%%r.jsonl", dir);
    snprintf(cupti, sizeof cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    const char *argv[] = {prog, "correct", NULL};
    const char *env[] = {preload,
                         log,
                         cupti,
                         "RANK=7",
                         "OMPI_COMM_WORLD_RANK=",
                         "PMI_RANK=",
                         "SLURM_PROCID=",
                         "CUDA_INJECTION64_PATH=",
                         "ASAN_OPTIONS=detect_leaks=0",
                         NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    dls_run_free(&r);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int files = 0, pid = 0;
    char path[700] = "";
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        files++;
        assert_int_equal(sscanf(e->d_name, "log.%d.7.jsonl", &pid), 1);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    assert_int_equal(files, 1);
    assert_true(pid > 0);
    char *text = dls_read_file(path);
    assert_non_null(text);
    char want[64];
    snprintf(want, sizeof want, "\"pid\":%d", pid);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "\"ev\":\"export\""));
    free(text);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pid_rank_and_percent_are_expanded),
        cmocka_unit_test(a_path_that_does_not_fit_is_refused),
        cmocka_unit_test(rank_variables_are_read_in_launcher_order),
        cmocka_unit_test(a_preloaded_process_logs_to_the_expanded_path),
        cmocka_unit_test(records_of_many_threads_stay_whole_lines),
        cmocka_unit_test(a_timestamp_is_the_clock_across_a_change_of_second),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (g_log[0])
        unlink(g_log);
    return rc;
}
