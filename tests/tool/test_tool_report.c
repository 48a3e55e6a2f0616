/* Tests of `dlsync report`: sample logs of two processes written here (with a garbage line and
 * a truncated last line) are summarized in-process and by the command; the Chrome trace it
 * writes is parsed back with tools/json.c and with python3 -m json.tool and its structure
 * checked (tracks, instants, flow arrows from export to import). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "chrome.h"
#include "dls_test.h"
#include "json.h"
#include "logread.h"
#include "summary.h"

#define S0 "{\"id\":0,\"handle\":\"0x0\",\"kind\":\"legacy\",\"device\":0}"
#define S3 "{\"id\":3,\"handle\":\"0x55aa\",\"kind\":\"non-blocking\",\"device\":0}"
#define DEV0 "{\"type\":\"cuda\",\"id\":0}"

/* Process 100: two exports (one imported by tvm), races k1 (twice) and k2, one injected wait,
 * one fallback. A garbage line in the middle. */
static const char log_a[] =
    "{\"ev\":\"start\",\"t\":1000000000,\"pid\":100,\"tid\":100,\"exe\":\"/usr/bin/"
    "python3\",\"mode\":\"check\",\"version\":\"0.1\",\"rank\":0}\n"
    "{\"ev\":\"export\",\"t\":1000001000,\"pid\":100,\"tid\":100,\"xid\":1,\"framework\":\"pytorch\",\"symbol\":\"at::"
    "toDLPack(at::Tensor const&)\",\"device\":" DEV0 ",\"dtype\":\"float32\",\"shape\":[4]}\n"
    "{\"ev\":\"import\",\"t\":1000002000,\"pid\":100,\"tid\":101,\"xid\":1,\"framework\":\"tvm\",\"symbol\":"
    "\"TVMArrayFromDLPack\",\"device\":" DEV0 ",\"stream\":" S3 "}\n"
    "this line is garbage \x01\xff\n"
    "{\"ev\":\"export\",\"t\":1000003000,\"pid\":100,\"tid\":100,\"xid\":2,\"framework\":\"pytorch\",\"device\":{"
    "\"type\":\"cuda\",\"id\":1}}\n"
    "{\"ev\":\"race\",\"t\":1000004000,\"pid\":100,\"tid\":101,\"xid\":1,\"key\":\"k1\",\"count\":1,\"kind\":\"write-"
    "read\","
    "\"tensor\":{\"device\":" DEV0 ",\"dtype\":\"float32\",\"data\":\"0x7000\"},"
    "\"producer\":{\"op\":\"kernel fill\",\"stream\":" S0
    ",\"stack\":[\"a\"]},\"consumer\":{\"op\":\"kernel use\",\"stream\":" S3 ",\"stack\":[]},\"why\":\"no event wait\","
    "\"fix\":{\"id\":\"consumer-stream\",\"text\":\"wait for stream 0 on stream 3\"}}\n"
    "{\"ev\":\"race\",\"t\":1000005000,\"pid\":100,\"tid\":101,\"xid\":1,\"key\":\"k1\",\"count\":2,\"kind\":\"write-"
    "read\","
    "\"producer\":{\"op\":\"kernel fill\",\"stream\":" S0 "},\"consumer\":{\"op\":\"kernel use\",\"stream\":" S3 "}}\n"
    "{\"ev\":\"race\",\"t\":1000006000,\"pid\":100,\"tid\":101,\"xid\":2,\"key\":\"k2\",\"count\":1,\"kind\":\"host-"
    "read\","
    "\"producer\":{\"op\":\"memcpy DtoH\",\"stream\":" S3 "},\"consumer\":{\"op\":\"host read\",\"stream\":null},"
    "\"fix\":{\"id\":\"host-sync\",\"text\":\"synchronize stream 3\"}}\n"
    "{\"ev\":\"inject\",\"t\":1000007000,\"pid\":100,\"tid\":101,\"xid\":1,\"what\":\"event-wait\",\"from\":" S0
    ",\"to\":" S3 ",\"reason\":\"first use\"}\n"
    "{\"ev\":\"fallback\",\"t\":1000008000,\"pid\":100,\"tid\":100,\"reason\":\"no CUPTI "
    "observer\",\"detail\":\"context sync at export\"}\n"
    "{\"ev\":\"release\",\"t\":1000009000,\"pid\":100,\"tid\":101,\"xid\":1}\n"
    "{\"ev\":\"future_kind\",\"t\":1000009500,\"pid\":100,\"tid\":101}\n"
    "{\"ev\":\"summary\",\"t\":1000010000,\"pid\":100,\"tid\":100,\"exchanges\":2}\n";

/* Process 200: its xid 1 must not pair with process 100's; an import nobody exported; race k1
 * again (3 occurrences there); a truncated last line. */
static const char log_b[] =
    "{\"ev\":\"start\",\"t\":1000000500,\"pid\":200,\"tid\":200,\"exe\":\"/usr/bin/"
    "python3\",\"mode\":\"check\",\"version\":\"0.1\",\"rank\":1}\n"
    "{\"ev\":\"export\",\"t\":1000001500,\"pid\":200,\"tid\":200,\"xid\":1,\"framework\":\"tvm\",\"device\":" DEV0 "}\n"
    "{\"ev\":\"import\",\"t\":1000002500,\"pid\":200,\"tid\":200,\"xid\":1,\"framework\":\"pytorch\",\"device\":" DEV0
    "}\n"
    "{\"ev\":\"import\",\"t\":1000003500,\"pid\":200,\"tid\":200,\"xid\":9,\"framework\":\"mxnet\",\"device\":" DEV0
    "}\n"
    "{\"ev\":\"race\",\"t\":1000004500,\"pid\":200,\"tid\":200,\"xid\":1,\"key\":\"k1\",\"count\":3,\"kind\":\"write-"
    "read\"}\n"
    "{\"ev\":\"export\",\"t\":1000005500,\"pid\":200,\"tid\":200,\"xid\":2,\"framew";

typedef struct {
    char dir[64];
    char a[96], b[96], trace[96];
} fixture;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/dlsync-report-XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    snprintf(fx->a, sizeof fx->a, "%s/a.jsonl", fx->dir);
    snprintf(fx->b, sizeof fx->b, "%s/b.jsonl", fx->dir);
    snprintf(fx->trace, sizeof fx->trace, "%s/trace.json", fx->dir);
    write_text(fx->a, log_a);
    write_text(fx->b, log_b);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    unlink(fx->a);
    unlink(fx->b);
    unlink(fx->trace);
    rmdir(fx->dir);
    free(fx);
    return 0;
}

static void counts_merge_two_processes(void **state)
{
    fixture *fx = *state;
    dlt_log_set set = {0};
    assert_int_equal(dlt_log_read(&set, fx->a, NULL), 0);
    assert_int_equal(dlt_log_read(&set, fx->b, NULL), 0);
    assert_int_equal(set.damaged, 2);
    dlt_summary_counts c;
    assert_int_equal(dlt_summary_count(&set, &c), 0);
    assert_int_equal(c.processes, 2);
    assert_int_equal(c.exchanges, 4); /* 3 exports + the import nobody exported */
    assert_int_equal(c.races, 2);
    assert_int_equal(c.race_total, 6); /* k1: 2 in pid 100 + 3 in pid 200; k2: 1 */
    assert_int_equal(c.injected, 1);
    assert_int_equal(c.fallbacks, 1);
    dlt_log_set_free(&set);
}

static void command_prints_pairs_races_and_damage(void **state)
{
    fixture *fx = *state;
    char bin[512];
    const char *argv[] = {dls_build_path(bin, sizeof bin, "bin/dlsync"), "report", fx->a, fx->b, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "2 processes"));
    assert_non_null(strstr(r.out, "pytorch -> tvm"));
    assert_non_null(strstr(r.out, "tvm -> pytorch"));
    assert_non_null(strstr(r.out, "(not seen) -> mxnet"));
    assert_non_null(strstr(r.out, "pytorch -> (not imported)"));
    assert_non_null(strstr(r.out, "cuda:1"));
    assert_non_null(strstr(r.out, "Races: 2 distinct, 6 occurrences"));
    assert_non_null(strstr(r.out, "write-read x5"));
    assert_non_null(strstr(r.out, "kernel fill on stream 0 (legacy, dev 0)"));
    /* Grouped by fix, the most frequent first, each under its heading from advice.def. */
    const char *by_stream = strstr(r.out, "\n  fix consumer-stream: legacy C to_dlpack/from_dlpack: hand the tensor "
                                          "over for the consumer's stream, or make that stream wait for the "
                                          "producer's (1 distinct, 5 occurrences)\n    write-read x5");
    const char *by_sync = strstr(r.out, "\n  fix host-sync: host read: synchronize the producer's stream before "
                                        "reading (1 distinct, 1 occurrences)\n    host-read x1");
    assert_non_null(by_stream);
    assert_non_null(by_sync);
    assert_true(by_stream < by_sync);
    assert_non_null(strstr(r.out, "      fix       wait for stream 0 on stream 3\n"));
    assert_non_null(strstr(r.out, "Injected syncs: 1"));
    assert_non_null(strstr(r.out, "no CUPTI observer: context sync at export"));
    char where[160];
    snprintf(where, sizeof where, "%s:4: malformed JSON", fx->a);
    assert_non_null(strstr(r.err, where));
    snprintf(where, sizeof where, "%s:6: last line cut short", fx->b);
    assert_non_null(strstr(r.err, where));
    dls_run_free(&r);
}

static const dlt_json_value *event_field(const dlt_json_value *e, const char *key, dlt_json_type type)
{
    const dlt_json_value *v = dlt_json_get(e, key);
    if (!v || v->type != type)
        fail_msg("trace event without a %s of type %d", key, (int)type);
    return v;
}

static void chrome_trace_is_valid_and_linked(void **state)
{
    fixture *fx = *state;
    char bin[512];
    const char *argv[] = {
        dls_build_path(bin, sizeof bin, "bin/dlsync"), "report", "--chrome-trace", fx->trace, fx->a, fx->b, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    dls_run_free(&r);

    const char *py[] = {"/usr/bin/python3", "-m", "json.tool", fx->trace, NULL};
    if (access(py[0], X_OK) == 0) {
        assert_int_equal(dls_run(py, NULL, &r), 0);
        if (r.status != 0)
            fail_msg("python3 -m json.tool rejected the trace: %s", r.err);
        dls_run_free(&r);
    }

    char *text = dls_read_file(fx->trace);
    assert_non_null(text);
    dlt_json_error err;
    dlt_json_value *doc = dlt_json_parse(text, strlen(text), &err);
    if (!doc)
        fail_msg("trace is not JSON at %zu: %s", err.offset, err.message);
    const dlt_json_value *events = event_field(doc, "traceEvents", DLT_JSON_ARRAY);
    int exports = 0, imports = 0, races = 0, injects = 0, stream_tracks = 0, thread_tracks = 0;
    long long starts[16], finishes[16];
    int ns = 0, nf = 0;
    for (size_t i = 0; i < events->len; i++) {
        const dlt_json_value *e = events->items[i];
        const char *ph = event_field(e, "ph", DLT_JSON_STRING)->str;
        long long pid, tid, id;
        assert_true(dlt_json_get_int(e, "pid", &pid));
        assert_true(dlt_json_get_int(e, "tid", &tid));
        const char *name = event_field(e, "name", DLT_JSON_STRING)->str;
        if (strcmp(ph, "M") == 0) {
            if (strcmp(name, "thread_name") == 0) {
                event_field(event_field(e, "args", DLT_JSON_OBJECT), "name", DLT_JSON_STRING);
                if (tid >= DLT_CHROME_STREAM_TID_BASE)
                    stream_tracks++;
                else
                    thread_tracks++;
            }
            continue;
        }
        assert_int_equal(event_field(e, "ts", DLT_JSON_NUMBER)->type, DLT_JSON_NUMBER);
        if (strcmp(ph, "i") == 0) {
            const char *cat = event_field(e, "cat", DLT_JSON_STRING)->str;
            event_field(e, "args", DLT_JSON_OBJECT);
            exports += strncmp(name, "export", 6) == 0;
            imports += strncmp(name, "import", 6) == 0;
            races += strcmp(cat, "race") == 0 && tid >= DLT_CHROME_STREAM_TID_BASE;
            injects += strcmp(cat, "inject") == 0;
        } else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
            assert_true(dlt_json_get_int(e, "id", &id));
            if (ph[0] == 's' && ns < 16)
                starts[ns++] = id;
            else if (ph[0] == 'f' && nf < 16)
                finishes[nf++] = id;
        } else {
            fail_msg("unexpected phase %s", ph);
        }
    }
    assert_int_equal(exports, 3);
    assert_int_equal(imports, 3);
    assert_true(races >= 3);
    assert_true(injects >= 1);
    assert_int_equal(stream_tracks, 2); /* streams 0 and 3 of process 100 */
    assert_int_equal(thread_tracks, 3); /* 100, 101 and 200 */
    /* Two exchange arrows (pid 100 xid 1, pid 200 xid 1), one inject arrow, three race arrows
     * (k1 twice between streams; k2 from stream 3 to the host thread that read): each finish
     * has its start. */
    assert_int_equal(nf, 6);
    for (int i = 0; i < nf; i++) {
        int found = 0;
        for (int j = 0; j < ns; j++)
            found |= starts[j] == finishes[i];
        assert_true(found);
    }
    dlt_json_free(doc);
    free(text);
}

static void bad_input_gives_messages_not_crashes(void **state)
{
    fixture *fx = *state;
    char bin[512], junk[96];
    snprintf(junk, sizeof junk, "%s/junk.bin", fx->dir);
    FILE *f = fopen(junk, "wb");
    for (int i = 0; i < 4096; i++)
        fputc((i * 131) & 0xff, f);
    fclose(f);
    const char *argv[] = {dls_build_path(bin, sizeof bin, "bin/dlsync"), "report", junk, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    /* A binary file is no log: one message for the file, not one per line, and a failure. */
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.out, "0 records from 0 processes"));
    assert_non_null(strstr(r.err, "junk.bin:1:"));
    assert_non_null(strstr(r.err, "not a dlsync log"));
    assert_int_equal(dls_count(r.err, "\n"), 1);
    dls_run_free(&r);
    unlink(junk);

    const char *missing[] = {bin, "report", "/nonexistent/dlsync.jsonl", NULL};
    assert_int_equal(dls_run(missing, NULL, &r), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "/nonexistent/dlsync.jsonl: cannot open: No such file or directory"));
    dls_run_free(&r);

    const char *nolog[] = {bin, "report", "--chrome-trace", NULL};
    assert_int_equal(dls_run(nolog, NULL, &r), 0);
    assert_int_equal(r.status, 2);
    dls_run_free(&r);
}

/* Runs `dlsync report ARGS...` (NULL-terminated) under a time limit and returns its result in r. */
static void report(dls_run_result *r, ...)
{
    char bin[512];
    const char *argv[24] = {"timeout", "60", dls_build_path(bin, sizeof bin, "bin/dlsync"), "report"};
    size_t n = 4;
    va_list ap;
    va_start(ap, r);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 23;)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    assert_int_equal(dls_run(argv, NULL, r), 0);
}

/* The case: `--chrome-trace run.*.jsonl` with the output's name forgotten. */
static void the_output_is_never_a_log(void **state)
{
    fixture *fx = *state;
    dls_run_result r;
    report(&r, "--chrome-trace", fx->a, fx->b, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "looks like a dlsync log; it is not overwritten"));
    dls_run_free(&r);
    char *text = dls_read_file(fx->a);
    assert_string_equal(text, log_a);
    free(text);
    /* Not an input either, even when it does not look like a log (here: read from stdin). */
    report(&r, "--chrome-trace", "/dev/stdin", "-", NULL);
    assert_int_equal(r.status, 2);
    dls_run_free(&r);
    /* A value that is an option is no file name; an existing timeline is replaced. */
    report(&r, "--chrome-trace", "--json", fx->a, NULL);
    assert_int_equal(r.status, 2);
    dls_run_free(&r);
    write_text(fx->trace, "{\"traceEvents\":[]}\n");
    report(&r, fx->a, "--chrome-trace", fx->trace, NULL);
    assert_int_equal(r.status, 0);
    dls_run_free(&r);
    text = dls_read_file(fx->trace);
    assert_true(dls_count(text, "\"ph\"") > 2);
    free(text);
    /* `-`: the timeline on stdout, the text on stderr. */
    report(&r, "--chrome-trace", "-", fx->a, NULL);
    assert_int_equal(r.status, 0);
    assert_true(r.out[0] == '{' && strstr(r.out, "\"traceEvents\":["));
    assert_non_null(strstr(r.err, "Races: 2 distinct"));
    dls_run_free(&r);
}

/* Options anywhere; `-` reads stdin; `--` ends the options. */
static void options_anywhere_and_stdin(void **state)
{
    fixture *fx = *state;
    dls_run_result r;
    report(&r, fx->a, "--json", fx->b, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"processes\":2,"));
    dls_run_free(&r);
    char bin[512], cmd[1024];
    snprintf(cmd, sizeof cmd, "%s report - < %s", dls_build_path(bin, sizeof bin, "bin/dlsync"), fx->a);
    const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    assert_int_equal(dls_run(sh, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "1 process\n"));
    dls_run_free(&r);
    snprintf(cmd, sizeof cmd, "cat %s | %s report -- -", fx->a, bin);
    assert_int_equal(dls_run(sh, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Races: 2 distinct"));
    dls_run_free(&r);
}

/* Devices and directories are refused with one line each; nothing hangs on /dev/zero. A line
 * longer than the limit stops that file. */
static void what_is_not_a_log_is_refused(void **state)
{
    fixture *fx = *state;
    dls_run_result r;
    report(&r, "/dev/zero", fx->dir, fx->a, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "/dev/zero: refused: a character device"));
    assert_non_null(strstr(r.err, ": refused: a directory"));
    assert_int_equal(dls_count(r.err, "refused"), 2);
    assert_non_null(strstr(r.out, "1 process\n"));
    dls_run_free(&r);
    char long_log[128];
    snprintf(long_log, sizeof long_log, "%s/long.jsonl", fx->dir);
    FILE *f = fopen(long_log, "w");
    fputs("{\"ev\":\"start\",\"t\":1,\"pid\":7,\"tid\":7,\"mode\":\"check\"}\n", f);
    for (int i = 0; i < (1 << 20) + 10; i++)
        fputc('x', f);
    fputs("\n{\"ev\":\"race\",\"t\":2,\"pid\":7,\"tid\":7,\"key\":\"k\"}\n", f);
    fclose(f);
    report(&r, long_log, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "long.jsonl:2: line longer than 1048576 bytes"));
    assert_int_equal(dls_count(r.err, "\n"), 1);
    assert_non_null(strstr(r.out, "Races: 0 distinct"));
    dls_run_free(&r);
    unlink(long_log);
}

/* Control characters of log values are escaped, never sent to the terminal. */
static void control_characters_are_escaped(void **state)
{
    fixture *fx = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/esc.jsonl", fx->dir);
    write_text(path, "{\"ev\":\"start\",\"t\":1,\"pid\":5,\"tid\":5,\"exe\":\"/bin/\\u001b[2Jx\",\"mode\":\"trace\"}\n"
                     "{\"ev\":\"export\",\"t\":2,\"pid\":5,\"tid\":5,\"xid\":1,\"framework\":\"evil\\u001b[31m\\nfake "
                     "line\",\"device\":{\"type\":\"cuda\",\"id\":0}}\n");
    dls_run_result r;
    report(&r, path, NULL);
    assert_int_equal(r.status, 0);
    assert_null(strchr(r.out, '\x1b'));
    assert_non_null(strstr(r.out, "/bin/\\x1b[2Jx"));
    assert_non_null(strstr(r.out, "evil\\x1b[31m\\nfake line -> (not imported)"));
    dls_run_free(&r);
    unlink(path);
}

/* A check run whose observer never started is said at the top, not shown as zero races; a log of
 * an older dlsync (cupti none, exchanges) too; --json says the same. */
static void an_unchecked_run_is_said_first(void **state)
{
    fixture *fx = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/unchecked.jsonl", fx->dir);
    write_text(
        path, "{\"ev\":\"start\",\"t\":1,\"pid\":5,\"tid\":5,\"exe\":\"/bin/app\",\"mode\":\"check\"}\n"
              "{\"ev\":\"summary\",\"t\":2,\"pid\":5,\"tid\":5,\"cupti\":\"none\",\"exchanges\":3,\"races\":0,"
              "\"checked\":false,\"why\":\"no CUDA observer (CUPTI subscription held by nsys)\"}\n"
              "{\"ev\":\"start\",\"t\":1,\"pid\":6,\"tid\":6,\"exe\":\"/bin/old\",\"mode\":\"check\"}\n"
              "{\"ev\":\"summary\",\"t\":2,\"pid\":6,\"tid\":6,\"cupti\":\"none\",\"exchanges\":2,\"races\":0}\n"
              "{\"ev\":\"start\",\"t\":1,\"pid\":7,\"tid\":7,\"exe\":\"/bin/ok\",\"mode\":\"check\"}\n"
              "{\"ev\":\"summary\",\"t\":2,\"pid\":7,\"tid\":7,\"cupti\":\"shared\",\"exchanges\":2,\"checked\":true}\n"
              "{\"ev\":\"start\",\"t\":1,\"pid\":8,\"tid\":8,\"exe\":\"/bin/killed\",\"mode\":\"check\"}\n");
    dls_run_result r;
    report(&r, path, NULL);
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "NOT CHECKED: 3 of 4 check-mode processes could not be checked", 61) == 0);
    assert_non_null(strstr(r.out, "  pid 5 (/bin/app): no CUDA observer (CUPTI subscription held by nsys)\n"));
    assert_non_null(strstr(r.out, "  pid 6 (/bin/old): no CUDA observer (cupti=none)\n"));
    assert_non_null(strstr(r.out, "  pid 8 (/bin/killed): no summary record"));
    assert_null(strstr(r.out, "pid 7 (/bin/ok):"));
    dls_run_free(&r);
    report(&r, "--json", path, NULL);
    assert_int_equal(r.status, 0);
    dlt_json_error err;
    dlt_json_value *doc = dlt_json_parse(r.out, strlen(r.out), &err);
    assert_non_null(doc);
    const dlt_json_value *checked = dlt_json_get(doc, "checked"), *list = dlt_json_get(doc, "not_checked");
    assert_int_equal(checked->type, DLT_JSON_BOOL);
    assert_false(checked->boolean);
    assert_int_equal(list->len, 3);
    long long pid = 0;
    assert_true(dlt_json_get_int(list->items[0], "pid", &pid));
    assert_string_equal(dlt_json_get_str(list->items[0], "why"), "no CUDA observer (CUPTI subscription held by nsys)");
    dlt_json_free(doc);
    dls_run_free(&r);
    unlink(path);
}

/* --json: one object with the counts of the two sample logs. */
static void json_gives_the_summary_as_one_object(void **state)
{
    fixture *fx = *state;
    dls_run_result r;
    report(&r, "--json", fx->a, fx->b, NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(dls_count(r.out, "\n"), 1);
    dlt_json_error err;
    dlt_json_value *doc = dlt_json_parse(r.out, strlen(r.out), &err);
    if (!doc)
        fail_msg("not JSON at %zu: %s\n%s", err.offset, err.message, r.out);
    const char *keys[] = {"processes", "exchanges", "races",        "race_occurrences",
                          "injected",  "fallbacks", "damaged_lines"};
    const long long want[] = {2, 4, 2, 6, 1, 1, 2};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        long long v = -1;
        assert_true(dlt_json_get_int(doc, keys[i], &v));
        if (v != want[i])
            fail_msg("%s = %lld, want %lld", keys[i], v, want[i]);
    }
    assert_int_equal(dlt_json_get(doc, "checked")->type, DLT_JSON_BOOL);
    dlt_json_free(doc);
    dls_run_free(&r);
}

/* Suppressed races apart from the races; a capped log is said. */
static void suppressed_races_and_capped_logs(void **state)
{
    fixture *fx = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/supp.jsonl", fx->dir);
    write_text(path, "{\"ev\":\"start\",\"t\":1,\"pid\":5,\"tid\":5,\"exe\":\"/bin/app\",\"mode\":\"check\"}\n"
                     "{\"ev\":\"race\",\"t\":2,\"pid\":5,\"tid\":5,\"key\":\"k9\",\"kind\":\"write-read\","
                     "\"suppressed\":{\"rule\":\"race:libvendor\",\"file\":\"/etc/x.supp\",\"line\":3}}\n"
                     "{\"ev\":\"log_capped\",\"t\":3,\"pid\":5,\"tid\":5,\"limit\":4096}\n"
                     "{\"ev\":\"summary\",\"t\":4,\"pid\":5,\"tid\":5,\"cupti\":\"shared\",\"checked\":true,"
                     "\"dropped\":17}\n");
    dls_run_result r;
    report(&r, path, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Races: 0 distinct, 0 occurrences"));
    assert_non_null(strstr(r.out, "Suppressed races: 1 distinct, 1 occurrences\n"
                                  "    write-read x1  (key k9) by race:libvendor (/etc/x.supp:3)\n"));
    assert_non_null(strstr(r.out, "Logs capped: 1 process stopped writing exchange records"));
    assert_non_null(strstr(r.out, "  pid 5: limit 4096 bytes, 17 records dropped\n"));
    dls_run_free(&r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_output_is_never_a_log, setup, teardown),
        cmocka_unit_test_setup_teardown(options_anywhere_and_stdin, setup, teardown),
        cmocka_unit_test_setup_teardown(what_is_not_a_log_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(control_characters_are_escaped, setup, teardown),
        cmocka_unit_test_setup_teardown(an_unchecked_run_is_said_first, setup, teardown),
        cmocka_unit_test_setup_teardown(json_gives_the_summary_as_one_object, setup, teardown),
        cmocka_unit_test_setup_teardown(suppressed_races_and_capped_logs, setup, teardown),
        cmocka_unit_test_setup_teardown(counts_merge_two_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(command_prints_pairs_races_and_damage, setup, teardown),
        cmocka_unit_test_setup_teardown(chrome_trace_is_valid_and_linked, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_input_gives_messages_not_crashes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
