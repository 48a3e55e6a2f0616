/* Process hygiene of the preloaded shim (issue: never wrong, never stuck): the log on files that
 * cannot be written, descriptors a program closes and reuses, a closed stderr, a child started
 * without LD_PRELOAD, a deliberate CUDA_INJECTION64_PATH, and dlclose of the library while a
 * tensor carries its deleter. Each case runs the real libdlsync.so in a child process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dls_test.h"

static char g_shim[512], g_app[512], g_cuda[512], g_cupti[600], g_preload[1200];

static int setup(void **state)
{
    (void)state;
    char pv[1100];
    dls_build_path(g_shim, sizeof g_shim, "lib/libdlsync.so");
    dls_build_path(g_app, sizeof g_app, "tests/hygiene/hygiene_app");
    dls_build_path(g_cuda, sizeof g_cuda, "tests/hygiene/hygiene_cuda");
    snprintf(g_cupti, sizeof g_cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    snprintf(g_preload, sizeof g_preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, g_shim));
    return 0;
}

/* Runs argv with the shim preloaded (when `preload`) and `extra` (up to 4 more variables). */
static void run(const char *const argv[], int preload, const char *const extra[], dls_run_result *r)
{
    const char *env[12] = {
        preload ? g_preload : "LD_PRELOAD=", g_cupti,       "CUDA_INJECTION64_PATH=", "DLSYNC_AUTO_INJECTION=",
        "ASAN_OPTIONS=detect_leaks=0",       "DLSYNC_LOG=", "DLSYNC_VERBOSE="};
    size_t n = 7;
    for (size_t i = 0; extra && extra[i] && n < 11; i++)
        env[n++] = extra[i];
    env[n] = NULL;
    assert_int_equal(dls_run(argv, env, r), 0);
}

/* Runs argv preloaded, with DLSYNC_VERBOSE=1 and the log at dir/logname; the run must succeed. */
static void run_logged(const char *const argv[], const char *dir, const char *logname, dls_run_result *r)
{
    char log[128];
    snprintf(log, sizeof log, "DLSYNC_LOG=%s/%s", dir, logname);
    const char *extra[] = {log, "DLSYNC_VERBOSE=1", NULL};
    run(argv, 1, extra, r);
    assert_int_equal(r->status, 0);
}

static void remove_dir(const char *dir)
{
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A log that cannot be opened for writing, or written: one warning, no log, the program runs to
 * its end. `timeout` bounds a hang (a FIFO open would block forever); it is preloaded too, as in
 * the report, so two processes warn once each. */
static void log_target_is_refused(const char *target, const char *why)
{
    char log[600];
    snprintf(log, sizeof log, "DLSYNC_LOG=%s", target);
    const char *argv[] = {"timeout", "60", g_app, "run", NULL};
    const char *extra[] = {log, NULL};
    dls_run_result r;
    run(argv, 1, extra, &r);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "sum 21.0\n");
    assert_int_equal(dls_count(r.err, "dlsync: warning:"), 2);
    assert_int_equal(dls_count(r.err, why), 2);
    dls_run_free(&r);
}

static void fifo_without_reader(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-hyg-XXXXXX", fifo[64];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    log_target_is_refused(fifo, "a FIFO without a reader");
    unlink(fifo);
    rmdir(dir);
}

static void directory(void **state)
{
    (void)state;
    log_target_is_refused("/tmp", "Is a directory");
}

static void full_device(void **state)
{
    (void)state;
    log_target_is_refused("/dev/full", "writing failed for DLSYNC_LOG=/dev/full");
}

/* The program closes descriptors from 3 up, opens its data file and moves it onto the number
 * dlsync's log had: the data file holds only the program's bytes. */
static void reused_descriptor(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-hyg-XXXXXX", logp[64], data[64];
    assert_non_null(mkdtemp(dir));
    snprintf(logp, sizeof logp, "%s/log.jsonl", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    const char *argv[] = {g_app, "daemon", logp, data, NULL};
    dls_run_result r;
    run_logged(argv, dir, "log.jsonl", &r);
    int fd = -1, cloexec = -1;
    assert_int_equal(sscanf(r.out, "logfd=%d cloexec=%d", &fd, &cloexec), 2);
    assert_true(fd >= 100); /* above the descriptors programs usually hold */
    assert_int_equal(cloexec, 1);
    assert_non_null(strstr(r.out, "sum 21.0\n"));
    char *text = dls_read_file(data);
    assert_non_null(text);
    assert_string_equal(text, "data\n");
    free(text);
    text = dls_read_file(logp);
    assert_non_null(text);
    assert_int_equal(dls_count(text, "\"ev\":\"start\""), 1);
    assert_int_equal(dls_count(text, "\"ev\":\"export\""), 0); /* written after the close: dropped */
    free(text);
    /* stderr is intact here: the lost log is said once, and the summary still comes */
    assert_int_equal(dls_count(r.err, "closed or replaced the descriptor"), 1);
    assert_int_equal(dls_count(r.err, "dlsync: mode=fix"), 1);
    dls_run_free(&r);
    remove_dir(dir);
}

/* The program closes 0-2 and everything else, then opens files that become 0-2: the warning
 * about the lost log and the exit summary are not written into them. */
static void closed_stderr(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-hyg-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    const char *argv[] = {g_app, "closed-stderr", dir, NULL};
    dls_run_result r;
    run_logged(argv, dir, "log.jsonl", &r);
    dls_run_free(&r);
    const char *want[] = {"", "", "program 21.0\n"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%d", dir, i);
        char *text = dls_read_file(path);
        assert_non_null(text);
        assert_string_equal(text, want[i]);
        free(text);
    }
    remove_dir(dir);
}

/* Number of files in dir. */
static int files_in(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* A preloaded parent starts a CUDA program without LD_PRELOAD: the child inherits the
 * CUDA_INJECTION64_PATH the parent's dlsync set, yet dlsync stays inert there (no log, no
 * summary, the child's own CUPTI subscription succeeds). */
static void child_without_preload_is_inert(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-hyg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *argv[] = {g_app, "spawn", g_cuda, NULL};
    dls_run_result r;
    run_logged(argv, dir, "log.%p.jsonl", &r);
    assert_string_equal(r.out, "subscribe=0\n");
    assert_int_equal(dls_count(r.err, "dlsync:"), 1); /* the parent's summary only */
    assert_int_equal(dls_count(r.err, "dlsync: mode=fix"), 1);
    dls_run_free(&r);
    assert_int_equal(files_in(dir), 1); /* the parent's log only */
    remove_dir(dir);
}

/* CUDA_INJECTION64_PATH pointed at libdlsync.so by the user (no marker): dlsync runs, observes
 * the program's CUDA work and prints its summary. */
static void deliberate_injection_works(void **state)
{
    (void)state;
    char inj[600];
    snprintf(inj, sizeof inj, "CUDA_INJECTION64_PATH=%s", g_shim);
    const char *argv[] = {g_cuda, NULL};
    const char *env[] = {
        "LD_PRELOAD=", g_cupti, inj, "DLSYNC_AUTO_INJECTION=", "DLSYNC_VERBOSE=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    const char *ops = strstr(r.err, " ops=");
    assert_non_null(ops);
    assert_true(atoi(ops + 5) > 0);
    dls_run_free(&r);
}

/* A C API user dlopens libdlsync.so, gets a tensor whose deleter is the shim's, dlcloses the
 * library and then releases the tensor: the code is still there (-z nodelete). */
static void dlclose_with_live_deleter(void **state)
{
    (void)state;
    const char *argv[] = {g_app, "dlclose", g_shim, NULL};
    dls_run_result r;
    run(argv, 0, NULL, &r);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "released\n");
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fifo_without_reader),
        cmocka_unit_test(directory),
        cmocka_unit_test(full_device),
        cmocka_unit_test(reused_descriptor),
        cmocka_unit_test(closed_stderr),
        cmocka_unit_test(child_without_preload_is_inert),
        cmocka_unit_test(deliberate_injection_works),
        cmocka_unit_test(dlclose_with_live_deleter),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
