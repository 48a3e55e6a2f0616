/* Python frames in race reports, and the query API as the `dlsync` module reads it: a legacy
 * producer (the fake MXNet) and consumer (the fake TVM) called from Python through ctypes
 * (tests/python/scen_ctypes.py), CDLL (each call releases the GIL: the frames come when the thread
 * takes it back) and PyDLL (the GIL is held), on the simulator, under Debian's python3 (libpython
 * inside the executable) and tests/python3-shared (the shared libpython). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dls_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATIC_PYTHON "/usr/bin/python3"

static char g_script[4096], g_query[4096], g_libdir[4096], g_shared[4096];

/* The line of tests/python/scen_ctypes.py that holds `marker`. */
static int line_of(const char *marker)
{
    char *text = dls_read_file(g_script);
    assert_non_null(text);
    int line = 1;
    const char *at = strstr(text, marker);
    assert_non_null(at);
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    free(text);
    return line;
}

/* Runs `script` (scen_ctypes.py or query.py) under `python` with the shim in `mode` (NULL: no
 * shim), DLSYNC_STACK=stack (NULL: unset) and the log in `log` (NULL: none). */
static void run_py(const char *python, const char *script, const char *kind, const char *which, const char *mode,
                   const char *stack, const char *log, dls_run_result *r)
{
    char shim[4096], preload[8192], pre[8300], cupti[4200], m[64], st[64], lg[4200];
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    /* Without the shim, a sanitized build's libraries still need their runtime first. */
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s",
             mode ? dls_preload_value(preload, sizeof preload, shim) : DLS_SAN_RUNTIME);
    char cp[4096];
    snprintf(cupti, sizeof cupti, "DLSYNC_CUPTI=%s", dls_build_path(cp, sizeof cp, "cudasim/libcupti.so.13"));
    snprintf(m, sizeof m, "DLSYNC_MODE=%s", mode ? mode : "");
    snprintf(st, sizeof st, "DLSYNC_STACK=%s", stack ? stack : "");
    snprintf(lg, sizeof lg, "DLSYNC_LOG=%s", log ? log : "");
    /* Python frees little at exit: its leaks are not the shim's (test_preload does the same). */
    const char *env[] = {
        pre, cupti, m, st, lg, "CUDA_INJECTION64_PATH=", "DLSYNC_AUTO_INJECTION=", "ASAN_OPTIONS=detect_leaks=0", NULL};
    const char *argv[] = {python, script, g_libdir, kind, which, NULL};
    assert_int_equal(dls_run(argv, env, r), 0);
    if (r->status != 0)
        print_message("%s exited %d:\n%s\n", python, r->status, r->err);
    assert_int_equal(r->status, 0);
}

static void need(const char *python)
{
    if (access(python, X_OK) != 0) {
        print_message("%s missing (libpython3-dev not installed): skipped\n", python);
        skip();
    }
}

/* The text and the log of a check-mode race name the producer's export line and the consumer's
 * read line of scen_ctypes.py, innermost first, after the consumer's native frames. */
static void python_frames_in_reports(const char *python, const char *kind)
{
    need(python);
    char log[64];
    snprintf(log, sizeof log, "/tmp/dls_pyframes_%d.jsonl", (int)getpid());
    unlink(log);
    dls_run_result r;
    run_py(python, g_script, kind, "racy", "check", NULL, log, &r);
    assert_non_null(strstr(r.out, "value 0"));
    char want[8300];
    snprintf(want, sizeof want, "    at Scenario.exchange (%s:%d)\n", g_script, line_of("# the producer's export"));
    const char *producer = strstr(r.err, "  producer: "), *consumer = strstr(r.err, "  consumer: ");
    assert_non_null(producer);
    assert_non_null(consumer);
    const char *p = strstr(producer, want);
    assert_true(p && p < consumer); /* the export's Python line is in the producer's stack */
    snprintf(want, sizeof want, "    at Scenario.exchange (%s:%d)\n", g_script, line_of("# the consumer's read"));
    const char *c = strstr(consumer, want);
    assert_non_null(c); /* and the read's in the consumer's, after its native frames */
    const char *native = strstr(consumer, "libfaketvm.so"); /* the consumer's native frames (tvm_read) */
    assert_true(native && native < c);
    snprintf(want, sizeof want, "    at main (%s:", g_script);
    assert_non_null(strstr(c, want));                          /* outer Python frames follow, innermost first */
    assert_null(strstr(consumer, "_PyEval_EvalFrameDefault")); /* the interpreter's frames are replaced */
    dls_run_free(&r);
    char *text = dls_read_file(log);
    assert_non_null(text);
    snprintf(want, sizeof want, "\"python\":[{\"function\":\"Scenario.exchange\",\"file\":\"%s\",\"line\":%d}",
             g_script, line_of("# the consumer's read"));
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want, "\"python\":[{\"function\":\"Scenario.exchange\",\"file\":\"%s\",\"line\":%d}",
             g_script, line_of("# the producer's export"));
    assert_non_null(strstr(text, want));
    /* dlsync report --chrome-trace carries the race record, Python frames included. */
    char tool[4096], trace[80];
    snprintf(trace, sizeof trace, "%s.trace.json", log);
    const char *argv[] = {
        dls_build_path(tool, sizeof tool, "bin/dlsync"), "report", "--chrome-trace", trace, log, NULL};
    dls_run_result t;
    assert_int_equal(dls_run(argv, NULL, &t), 0);
    assert_int_equal(t.status, 0);
    dls_run_free(&t);
    char *chrome = dls_read_file(trace);
    assert_non_null(chrome);
    assert_non_null(strstr(chrome, "\"RACE write-read xid 1\""));
    assert_non_null(strstr(chrome, want));
    free(chrome);
    free(text);
    unlink(trace);
    unlink(log);
}

static void static_python_cdll(void **state)
{
    (void)state;
    python_frames_in_reports(STATIC_PYTHON, "cdll");
}

static void static_python_pydll(void **state)
{
    (void)state;
    python_frames_in_reports(STATIC_PYTHON, "pydll");
}

static void shared_libpython_cdll(void **state)
{
    (void)state;
    python_frames_in_reports(g_shared, "cdll");
}

static void shared_libpython_pydll(void **state)
{
    (void)state;
    python_frames_in_reports(g_shared, "pydll");
}

/* DLSYNC_STACK=native: today's native frames only; python: the Python frames only. */
static void stack_kinds(void **state)
{
    (void)state;
    dls_run_result r;
    run_py(STATIC_PYTHON, g_script, "cdll", "racy", "check", "native", NULL, &r);
    const char *consumer = strstr(r.err, "  consumer: ");
    assert_non_null(consumer);
    assert_null(strstr(r.err, "scen_ctypes.py"));
    assert_non_null(strstr(consumer, "libfaketvm.so"));
    assert_non_null(strstr(consumer, "_PyEval_EvalFrameDefault")); /* the interpreter's own frames */
    dls_run_free(&r);
    run_py(STATIC_PYTHON, g_script, "pydll", "racy", "check", "python", NULL, &r);
    consumer = strstr(r.err, "  consumer: ");
    assert_non_null(consumer);
    const char *first = strstr(consumer, "\n    at ");
    assert_non_null(first);
    assert_true(strncmp(first, "\n    at Scenario.exchange (", 27) == 0);
    assert_null(strstr(consumer, "libfaketvm.so"));
    dls_run_free(&r);
}

/* The synced twin reports nothing, and fix makes the racy read right: frames are only captured
 * for reports. */
static void synced_and_fixed_report_nothing(void **state)
{
    (void)state;
    dls_run_result r;
    run_py(STATIC_PYTHON, g_script, "cdll", "synced", "check", NULL, NULL, &r);
    assert_non_null(strstr(r.out, "value 42"));
    assert_null(strstr(r.err, "dlsync: race"));
    dls_run_free(&r);
    run_py(STATIC_PYTHON, g_script, "cdll", "racy", "fix", NULL, NULL, &r);
    assert_non_null(strstr(r.out, "value 42"));
    /* nothing but fix's summary line, which says it ordered the read */
    assert_true(strncmp(r.err, "dlsync: fix summary: 1 wait injected", 36) == 0);
    assert_int_equal(dls_count(r.err, "\n"), 1);
    dls_run_free(&r);
}

/* The in-tree dlsync module over the query API: state, races with their Python frames,
 * exchanges, injected orderings, no_races(); import dlsync loads no CUDA. */
static void query_api_from_python(void **state)
{
    (void)state;
    dls_run_result r;
    run_py(STATIC_PYTHON, g_query, "cdll", "racy", "check", NULL, NULL, &r);
    assert_non_null(strstr(r.out, "\"import_loads_cuda\": false, \"active\": true, \"mode\": \"check\""));
    assert_non_null(strstr(r.out, "\"no_races\": \"raised 1\""));
    assert_non_null(strstr(r.out, "\"races\": 1,"));
    assert_non_null(strstr(r.out, "\"race_reports\": 1,"));
    assert_non_null(strstr(r.out, "\"kind\": \"write-read\""));
    char want[4400];
    snprintf(want, sizeof want, "\"Scenario.exchange (%s:%d)\"", g_script, line_of("# the consumer's read"));
    assert_non_null(strstr(strstr(r.out, "\"consumer_stack\""), want));
    assert_non_null(strstr(r.out, "\"xid\": 1, \"producer\": \"mxnet\", \"producer_symbol\": \"MXNDArrayToDLPack\", "
                                  "\"consumer\": \"tvm\", \"consumer_symbol\": \"TVMArrayFromDLPack\", \"device\": "
                                  "\"cuda\", \"device_id\": 0, \"dtype\": \"float32\", \"shape\": [4], \"imports\": 1, "
                                  "\"released\": true"));
    assert_non_null(strstr(r.out, "\"injections\": []"));
    dls_run_free(&r);
    run_py(STATIC_PYTHON, g_query, "pydll", "racy", "fix", NULL, NULL, &r);
    assert_non_null(strstr(r.out, "\"value\": 42.0, \"no_races\": \"passed\""));
    assert_non_null(strstr(r.out, "\"injections\": [{\"number\": 1, \"xid\": 1, \"what\": \"event-wait\", "
                                  "\"from_stream\": 2, \"to_stream\": 3, \"reason\": \"first use on this stream\"}]"));
    assert_non_null(strstr(r.err, "mode is fix, not check; the block is not checked"));
    dls_run_free(&r);
    run_py(STATIC_PYTHON, g_query, "cdll", "racy", NULL, NULL, NULL, &r);
    assert_non_null(strstr(r.out, "\"import_loads_cuda\": false, \"active\": false, \"mode\": null"));
    assert_non_null(strstr(r.out, "\"state\": null, \"races\": [], \"exchanges\": [], \"injections\": []"));
    dls_run_free(&r);
}

int main(void)
{
    snprintf(g_script, sizeof g_script, "%s/tests/python/scen_ctypes.py", DLS_SRC_DIR);
    snprintf(g_query, sizeof g_query, "%s/tests/python/query.py", DLS_SRC_DIR);
    dls_build_path(g_libdir, sizeof g_libdir, "scenarios");
    dls_build_path(g_shared, sizeof g_shared, "tests/python3-shared");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(static_python_cdll),    cmocka_unit_test(static_python_pydll),
        cmocka_unit_test(shared_libpython_cdll), cmocka_unit_test(shared_libpython_pydll),
        cmocka_unit_test(stack_kinds),           cmocka_unit_test(synced_and_fixed_report_nothing),
        cmocka_unit_test(query_api_from_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
