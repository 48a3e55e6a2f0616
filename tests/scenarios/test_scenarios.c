/* The scenario corpus end to end on the simulator: every scenario without the shim (the racy
 * version is wrong, the twin right), under check (one report per hazard with the right tensor,
 * sides and fix line, nothing on the twin), trace and check (stdout unchanged), fix (racy version right,
 * no injection on the twin), forced failures of the shim's own CUDA calls, the exit summary,
 * and the no-observer fallback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "scen_run.h"

/* What check must report for each racy scenario (the kind, both sides, the fix's name), and the
 * one warning fix gives on it (NULL: none). */
static const struct {
    const char *name, *kind, *framework, *producer_op, *consumer_op, *fix, *fix_warning;
} g_expect[] = {
    {"side_stream", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"legacy_stream", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"per_thread", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"host_copy", "host-read", "mxnet", "cudaMemcpyAsync", "host read after TVMArrayFromDLPack", "host-sync", NULL},
    {"host_read_sync", "host-read", "mxnet", "cudaMemcpyAsync", "host read after TVMArrayFromDLPack", "host-sync",
     NULL},
    {"release_reuse", "release-reuse", "mxnet", "scen_write", "scen_read", "keep-alive", NULL},
    {"release_later", "release-reuse", "mxnet", "scen_write", "scen_read", "keep-alive", NULL},
    {"round_trip", "write-read", "tvm", "scen_write", "scen_read", "consumer-stream", NULL},
    {"two_streams", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"overlap_views", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"threads", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"dlsym", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"opaque", "write-read", "mxnet", "scen_write", "scen_read_opaque", "consumer-stream", NULL},
    {"concurrent_sync", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    /* the simulator names runtime calls by their callback id, as cupti_runtime_cbid.h spells it */
    {"graph_capture", "write-read", "mxnet", "scen_write", "cudaGraphLaunch_v10000", "consumer-stream",
     "dlsync: warning: an exchanged tensor was used by work captured into a CUDA graph"},
    {"devices_legacy", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"devices_stream", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"devices_peer", "write-read", "mxnet", "scen_write", "cudaMemcpyPeerAsync_v4000", "consumer-stream", NULL},
    {"devices_threads", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"device_reset", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    {"host_signal", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    /* the DLPack C exchange API's NoSync exports: the table's framework is named after its file */
    {"exchange_api", "write-read", "libfakemx.so", "scen_write", "scen_read", "work-stream", NULL},
    {"exchange_api_view", "write-read", "libfakemx.so", "scen_write", "scen_read", "work-stream", NULL},
    {"legacy_overlap", "write-read", "mxnet", "scen_write", "scen_read", "consumer-stream", NULL},
    /* two-way hazards: the later operation is the report's producer side, the pending use its consumer side */
    {"write_after_use", "write-after-use", "mxnet", "cudaMemsetAsync_v3020", "cudaMemcpyAsync_v3020",
     "wait-for-consumer", NULL},
    {"in_place_write", "use-after-write", "mxnet", "scen_read", "cudaMemcpyAsync_v3020", "wait-for-in-place-write",
     NULL},
    {"release_early", "use-after-release", "mxnet", "scen_write", "scen_read", "release-last", NULL},
    {"release_early_threads", "use-after-release", "mxnet", "scen_write", "scen_read", "release-last", NULL},
    {"release_early_round", "use-after-release", "mxnet", "scen_write", "scen_read", "release-last", NULL},
    {"write_after_use_devices", "write-after-use", "mxnet", "cudaMemsetAsync_v3020", "scen_read", "wait-for-consumer",
     NULL},
    /* the graph's launch writes what its capture wrote */
    {"write_after_use_capture", "write-after-use", "mxnet", "cudaGraphLaunch_v10000", "cudaMemcpyAsync_v3020",
     "wait-for-consumer", NULL},
};

/* Scenarios whose hazard is a kernel pair (a kernel after the consumer's pending use, neither
 * known to write): check counts it and lists it only with DLSYNC_KERNEL_PAIRS=1. */
static const char *const g_kernel_pairs[] = {"kernel_pair"};
#define NSCEN (sizeof g_expect / sizeof *g_expect)

/* Hazards in a racy scenario: one, except where it makes two racy exchanges. */
static int hazards(const char *name)
{
    return strcmp(name, "devices_threads") == 0 || strcmp(name, "device_reset") == 0 ? 2 : 1;
}

static void run(const char *name, const char *variant, const char *mode, const char *const *extra, scen_outcome *o)
{
    if (scen_run(name, variant, mode, extra, o) != 0)
        fail_msg("%s %s: could not start", name, variant);
    if (o->r.status != 0)
        fail_msg("%s %s (mode %s): exit %d\n%s", name, variant, mode ? mode : "none", o->r.status, o->r.err);
}

static void verdict(const scen_outcome *o, const char *name, const char *variant, const char *want)
{
    char line[64];
    snprintf(line, sizeof line, "verdict: %s\n", want);
    if (!strstr(o->r.out, line))
        fail_msg("%s %s: expected \"%s\", got:\n%s%s", name, variant, want, o->r.out, o->r.err);
}

static void without_the_shim_the_racy_version_is_wrong(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSCEN; i++) {
        scen_outcome o;
        run(g_expect[i].name, "racy", NULL, NULL, &o);
        verdict(&o, g_expect[i].name, "racy", "stale");
        scen_run_free(&o);
        run(g_expect[i].name, "correct", NULL, NULL, &o);
        verdict(&o, g_expect[i].name, "correct", "correct");
        scen_run_free(&o);
    }
}

/* The text of the JSON object after `"key":` in s (up to its closing brace), in buf. */
static const char *object_of(const char *s, const char *key, char *buf, size_t n)
{
    char k[32];
    snprintf(k, sizeof k, "\"%s\":{", key);
    const char *p = s ? strstr(s, k) : NULL;
    buf[0] = '\0';
    if (!p)
        return buf;
    const char *e = strstr(p, "\"stack\"");
    size_t len = e ? (size_t)(e - p) : strlen(p);
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p);
    return buf;
}

static void check_reports_each_hazard_once_with_both_sides(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSCEN; i++) {
        scen_outcome o;
        run(g_expect[i].name, "racy", "check", NULL, &o);
        const char *name = g_expect[i].name;
        if (scen_records(&o, "race") != hazards(name))
            fail_msg("%s: %d race records\n%s", name, scen_records(&o, "race"), o.log);
        const char *race = strstr(o.log, "{\"ev\":\"race\"");
        char want[160], side[512];
        snprintf(want, sizeof want, "\"kind\":\"%s\"", g_expect[i].kind);
        assert_non_null(strstr(race, want));
        snprintf(want, sizeof want, "\"framework\":\"%s\"", g_expect[i].framework);
        assert_non_null(strstr(race, want));
        assert_non_null(strstr(race, "\"dtype\":\"float32\""));
        assert_non_null(strstr(race, "\"device\":{\"type\":\""));
        snprintf(want, sizeof want, "{\"op\":\"%s", g_expect[i].producer_op);
        if (!strstr(object_of(race, "producer", side, sizeof side), want))
            fail_msg("%s: producer side %s, want %s", name, side, want);
        snprintf(want, sizeof want, "{\"op\":\"%s\"", g_expect[i].consumer_op);
        if (!strstr(object_of(race, "consumer", side, sizeof side), want))
            fail_msg("%s: consumer side %s, want %s", name, side, want);
        /* Both stacks are symbolized and reach the scenario program's own functions. */
        snprintf(want, sizeof want, "scen_%s", name);
        if (dls_count(race, want) < 2)
            fail_msg("%s: stacks without program frames: %s", name, race);
        snprintf(want, sizeof want, "\"fix\":{\"id\":\"%s\",\"text\":\"", g_expect[i].fix);
        assert_non_null(strstr(race, want));
        assert_non_null(strstr(o.r.err, "dlsync: race ("));
        assert_non_null(strstr(o.r.err, "  why: "));
        assert_non_null(strstr(o.r.err, "  fix: "));
        scen_run_free(&o);

        run(name, "correct", "check", NULL, &o);
        /* Nothing but the exit summary, which says so. */
        if (scen_records(&o, "race") || dls_count(o.r.err, "dlsync:") != 1 ||
            !strstr(o.r.err, "dlsync: check summary: 0 races reported, 0 suppressed"))
            fail_msg("%s correct: reported\n%s", name, o.r.err);
        scen_run_free(&o);
    }
}

/* The "  fix: " line of a report in err, with every hexadecimal number written 0x?, in buf. */
static const char *fix_line(const char *err, char *buf, size_t n)
{
    const char *p = strstr(err, "  fix: ");
    size_t len = 0;
    for (; p && *p && *p != '\n' && len + 4 < n; p++) {
        buf[len++] = *p;
        if (p[0] == '0' && p[1] == 'x') {
            buf[len++] = 'x';
            buf[len++] = '?';
            for (p += 2; p[1] && strchr("0123456789abcdef", p[1]); p++)
                ;
        }
    }
    buf[len] = '\0';
    return buf;
}

/* The whole fix line of one scenario of each kind: a legacy C exchange between non-blocking
 * streams, from a per-thread default stream, a host read, a release and reuse, a DLPack C exchange
 * API export, across devices. */
static void check_reports_say_what_to_change(void **state)
{
    (void)state;
    static const struct {
        const char *name, *line;
    } pinned[] = {
        {"side_stream",
         "  fix: get the tensor for the consumer's stream with dlsync_to_dlpack(\"mxnet\", handle, (intptr_t)0x?, &t) "
         "(dlsync.h) instead of MXNDArrayToDLPack, or cudaEventRecord(ev, (cudaStream_t)0x?) after scen_write and "
         "cudaStreamWaitEvent((cudaStream_t)0x?, ev, 0) before scen_read"},
        {"per_thread",
         "  fix: get the tensor for the consumer's stream with dlsync_to_dlpack(\"mxnet\", handle, (intptr_t)0x?, &t) "
         "(dlsync.h) instead of MXNDArrayToDLPack, or cudaEventRecord(ev, cudaStreamPerThread) after scen_write and "
         "cudaStreamWaitEvent((cudaStream_t)0x?, ev, 0) before scen_read"},
        {"host_copy",
         "  fix: synchronize the producer's stream before the host reads the tensor: "
         "cudaStreamSynchronize((cudaStream_t)0x?) after cudaMemcpyAsync_v3020, or cudaEventSynchronize on an event "
         "recorded there"},
        {"release_reuse",
         "  fix: keep the tensor alive until the consumer's stream finishes scen_read: release it after "
         "cudaStreamSynchronize((cudaStream_t)0x?), or cudaEventRecord(ev, (cudaStream_t)0x?) and "
         "cudaStreamWaitEvent((cudaStream_t)0x?, ev, 0) before scen_write reuses the memory (record_stream-like "
         "ordering, as torch's tensor.record_stream(consumer_stream))"},
        {"exchange_api",
         "  fix: launch scen_read on the stream libfakemx.so's DLPackExchangeAPI current_work_stream returns "
         "((cudaStream_t)0x?), or cudaEventRecord(ev, (cudaStream_t)0x?) after scen_write and "
         "cudaStreamWaitEvent((cudaStream_t)0x?, ev, 0) before scen_read"},
        {"devices_legacy",
         "  fix: get the tensor for the consumer's stream with dlsync_to_dlpack(\"mxnet\", handle, (intptr_t)0x?, &t) "
         "(dlsync.h) instead of MXNDArrayToDLPack, or cudaEventRecord(ev, cudaStreamLegacy /* of device 0 */) after "
         "scen_write and cudaStreamWaitEvent((cudaStream_t)0x? /* of device 1 */, ev, 0) before scen_read"},
    };
    for (size_t i = 0; i < sizeof pinned / sizeof *pinned; i++) {
        scen_outcome o;
        char line[1024];
        run(pinned[i].name, "racy", "check", NULL, &o);
        if (strcmp(fix_line(o.r.err, line, sizeof line), pinned[i].line) != 0)
            fail_msg("%s: fix line\n%s\nwant\n%s", pinned[i].name, line, pinned[i].line);
        scen_run_free(&o);
    }
}

static void trace_and_check_leave_stdout_unchanged(void **state)
{
    (void)state;
    static const char *const modes[] = {"trace", "check"};
    static const char *const variants[] = {"racy", "correct"};
    for (size_t i = 0; i < NSCEN; i++)
        for (int v = 0; v < 2; v++) {
            scen_outcome plain;
            run(g_expect[i].name, variants[v], NULL, NULL, &plain);
            for (int m = 0; m < 2; m++) {
                scen_outcome o;
                run(g_expect[i].name, variants[v], modes[m], NULL, &o);
                if (strcmp(o.r.out, plain.r.out) != 0)
                    fail_msg("%s %s under %s: stdout differs:\n%s---\n%s", g_expect[i].name, variants[v], modes[m],
                             plain.r.out, o.r.out);
                assert_int_equal(scen_records(&o, "inject"), 0);
                scen_run_free(&o);
            }
            scen_run_free(&plain);
        }
}

static void check_counts_kernel_pairs_and_lists_them_on_request(void **state)
{
    (void)state;
    static const char *const verbose[] = {"DLSYNC_VERBOSE=1", NULL};
    static const char *const listed[] = {"DLSYNC_KERNEL_PAIRS=1", NULL};
    for (size_t i = 0; i < sizeof g_kernel_pairs / sizeof *g_kernel_pairs; i++) {
        const char *name = g_kernel_pairs[i];
        scen_outcome o;
        run(name, "racy", NULL, NULL, &o);
        verdict(&o, name, "racy", "stale");
        scen_run_free(&o);
        run(name, "racy", "check", verbose, &o);
        if (scen_records(&o, "race") != 0 || !strstr(o.r.err, " kernel_pairs=1") ||
            !strstr(o.r.err, "1 kernel pairs not listed"))
            fail_msg("%s: the kernel pair is not counted alone:\n%s", name, o.r.err);
        scen_run_free(&o);
        run(name, "racy", "check", listed, &o);
        if (scen_records(&o, "race") != 1 || !strstr(o.log, "\"kind\":\"kernel-pair\"") ||
            !strstr(o.log, "\"fix\":{\"id\":\"order-kernels\""))
            fail_msg("%s: the kernel pair is not listed:\n%s", name, o.log);
        scen_run_free(&o);
        run(name, "correct", "check", listed, &o);
        verdict(&o, name, "correct", "correct");
        assert_int_equal(scen_records(&o, "race"), 0);
        scen_run_free(&o);
        run(name, "racy", "fix", NULL, &o);
        verdict(&o, name, "racy under fix", "correct");
        assert_int_equal(scen_records(&o, "inject"), 1);
        scen_run_free(&o);
        run(name, "correct", "fix", NULL, &o);
        verdict(&o, name, "correct under fix", "correct");
        assert_int_equal(scen_records(&o, "inject"), 0);
        scen_run_free(&o);
    }
}

/* A read-only tensor: nothing is ordered for the consumer's reads, in the racy version beyond its
 * first use and in the twin at all; without the flag (SCEN_WRITABLE=1) the consumer's kernels may
 * write, so fix orders the producer's copies after them and check counts the pairs (the twin is
 * right either way). */
static void a_read_only_tensor_orders_nothing_for_consumer_reads(void **state)
{
    (void)state;
    static const char *const verbose[] = {"DLSYNC_VERBOSE=1", NULL};
    static const char *const writable[] = {"DLSYNC_VERBOSE=1", "SCEN_WRITABLE=1", NULL};
    scen_outcome o;
    run("read_only", "racy", "fix", NULL, &o);
    verdict(&o, "read_only", "racy under fix", "correct");
    assert_int_equal(scen_records(&o, "inject"), 1);
    scen_run_free(&o);
    run("read_only", "correct", "check", verbose, &o);
    assert_int_equal(scen_records(&o, "race"), 0);
    assert_non_null(strstr(o.r.err, " kernel_pairs=0"));
    scen_run_free(&o);
    run("read_only", "correct", "fix", writable, &o);
    verdict(&o, "read_only", "writable under fix", "correct");
    assert_true(scen_records(&o, "inject") > 0);
    scen_run_free(&o);
    run("read_only", "correct", "check", writable, &o);
    assert_int_equal(scen_records(&o, "race"), 0);
    assert_null(strstr(o.r.err, " kernel_pairs=0"));
    scen_run_free(&o);
}

/* 1 when fix must order the correct twin of scenario `name` too: fix cannot see host loads, so a
 * host-visible import with the producer's write pending waits on the host even where the
 * consumer synchronizes before it reads (check watches the pages instead). */
static int fix_waits_for_the_twin(const char *name)
{
    return strcmp(name, "host_read_sync") == 0;
}

static void fix_corrects_the_racy_version_and_leaves_the_twin_alone(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSCEN; i++) {
        scen_outcome o;
        run(g_expect[i].name, "racy", "fix", NULL, &o);
        verdict(&o, g_expect[i].name, "racy under fix", "correct");
        if (scen_records(&o, "inject") < hazards(g_expect[i].name))
            fail_msg("%s: nothing injected\n%s", g_expect[i].name, o.log);
        const char *warning = g_expect[i].fix_warning;
        if (dls_count(o.r.err, "dlsync: warning") != (warning ? 1 : 0) || (warning && !strstr(o.r.err, warning)))
            fail_msg("%s: warnings:\n%s", g_expect[i].name, o.r.err);
        scen_run_free(&o);
        run(g_expect[i].name, "correct", "fix", NULL, &o);
        verdict(&o, g_expect[i].name, "correct under fix", "correct");
        if (fix_waits_for_the_twin(g_expect[i].name)) {
            if (scen_records(&o, "inject") != hazards(g_expect[i].name))
                fail_msg("%s correct: not waited for at the import\n%s", g_expect[i].name, o.log);
        } else if (scen_records(&o, "inject") != 0) {
            fail_msg("%s correct: injected\n%s", g_expect[i].name, o.log);
        } else {
            assert_non_null(strstr(o.log, "\"injected\":0"));
        }
        scen_run_free(&o);
    }
}

/* Runs scenario `name` racy under fix with `extra`, asserts it read correct data and that exactly
 * one ordering was injected, and returns that inject record (inside o->log). */
static const char *the_one_injection(const char *name, const char *const *extra, scen_outcome *o)
{
    run(name, "racy", "fix", extra, o);
    verdict(o, name, "racy under fix", "correct");
    assert_int_equal(scen_records(o, "inject"), 1);
    return strstr(o->log, "{\"ev\":\"inject\"");
}

/* The captured read is never given a wait (in the simulator as in CUDA, that wait would invalidate
 * the capture and the program would exit 2); the graph's launch is ordered instead, once, and
 * logged as a capture-end wait from the producer's stream to the consumer's. */
static void fix_orders_the_launch_of_a_captured_use(void **state)
{
    (void)state;
    const char *extra[] = {"DLSYNC_VERBOSE=1", NULL};
    scen_outcome o;
    const char *inj = the_one_injection("graph_capture", extra, &o);
    assert_non_null(strstr(inj, "\"what\":\"capture-end-wait\""));
    assert_non_null(strstr(inj, "\"reason\":\"graph launch of work captured after the export\""));
    assert_non_null(strstr(inj, "\"to\":{\"id\":"));
    assert_non_null(strstr(o.r.err, " injected=1 "));
    scen_run_free(&o);
}

/* Two devices: the event is recorded on device 0's legacy stream (not on device 1's, which the
 * legacy handle names while device 1 is current) and the consumer's device-1 stream waits for
 * it: one event wait from the producer's legacy stream to the consumer's stream, no fallback. */
static void fix_records_on_the_producer_device_and_waits_on_the_consumer_stream(void **state)
{
    (void)state;
    scen_outcome o;
    const char *inj = the_one_injection("devices_legacy", NULL, &o);
    assert_non_null(strstr(inj, "\"what\":\"event-wait\""));
    assert_non_null(strstr(inj, "\"from\":{\"id\":"));
    assert_non_null(strstr(inj, "\"handle\":\"0x1\",\"kind\":\"legacy\"},\"to\":{"));
    assert_non_null(strstr(inj, "\"kind\":\"non-blocking\"},\"reason\""));
    assert_int_equal(scen_records(&o, "fallback"), 0);
    scen_run_free(&o);
}

/* A race across devices names each side's stream with its own device, in the log and in the
 * text: the producer's stream of device 0, the consumer's stream of device 1 (the tensor is on
 * device 0). */
static void check_names_the_device_of_each_side(void **state)
{
    (void)state;
    static const char *const names[] = {"devices_legacy", "devices_stream", "devices_peer"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        scen_outcome o;
        char side[512];
        run(names[i], "racy", "check", NULL, &o);
        const char *race = strstr(o.log, "{\"ev\":\"race\"");
        assert_non_null(race);
        assert_non_null(strstr(race, "\"tensor\":{\"device\":{\"type\":\"cuda\",\"id\":0}"));
        if (!strstr(object_of(race, "producer", side, sizeof side), "\"device\":0}"))
            fail_msg("%s: producer side %s", names[i], side);
        if (!strstr(object_of(race, "consumer", side, sizeof side), "\"device\":1}"))
            fail_msg("%s: consumer side %s", names[i], side);
        if (!strstr(o.r.err, ") of device 0\n") || !strstr(o.r.err, ") of device 1\n"))
            fail_msg("%s: report text\n%s", names[i], o.r.err);
        scen_run_free(&o);
    }
}

static void failing_shim_cuda_calls_keep_the_output_correct(void **state)
{
    (void)state;
    static const char *const fails[] = {"SCEN_FAIL=cuEventRecord", "SCEN_FAIL=cuStreamWaitEvent",
                                        "SCEN_FAIL=cuEventCreate"};
    for (size_t f = 0; f < sizeof fails / sizeof *fails; f++) {
        const char *extra[] = {fails[f], NULL};
        scen_outcome o;
        run("side_stream", "racy", "fix", extra, &o);
        verdict(&o, "side_stream", fails[f], "correct");
        if (dls_count(o.r.err, "dlsync: warning") != 1)
            fail_msg("%s: warnings:\n%s", fails[f], o.r.err);
        assert_int_equal(scen_records(&o, "inject"), 1);
        assert_non_null(strstr(o.log, "\"what\":\"host-wait\""));
        scen_run_free(&o);
    }
}

static void the_summary_counts_ops_reports_and_injections(void **state)
{
    (void)state;
    const char *extra[] = {"DLSYNC_VERBOSE=1", NULL};
    scen_outcome o;
    run("side_stream", "racy", "check", extra, &o);
    assert_non_null(strstr(o.r.err, "dlsync: mode=check cupti=exclusive (CUPTI 13.0 shares no subscription; sharing "
                                    "needs CUPTI 13.3 and an r610 driver) exchanges=1"));
    assert_non_null(strstr(o.r.err, " races=1 suppressed=0 injected=0"));
    assert_null(strstr(o.r.err, " ops=0 "));
    scen_run_free(&o);
    run("side_stream", "racy", "fix", extra, &o);
    assert_non_null(strstr(o.r.err, " races=0 suppressed=0 injected=1 fallbacks=0"));
    scen_run_free(&o);
}

/* Without an observer fix synchronizes at export: the current context and every device's, since
 * it cannot tell where the producer's work is (device 0 while device 1 is current, in the
 * devices_* scenarios). */
static void without_an_observer_fix_synchronizes_at_export(void **state)
{
    (void)state;
    const char *extra[] = {"CUDASIM_CUPTI_BUSY=CUPTI for othertool", NULL};
    static const char *const names[] = {"side_stream", "devices_legacy", "devices_stream"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        scen_outcome o;
        run(names[i], "racy", "fix", extra, &o);
        verdict(&o, names[i], "racy without observer", "correct");
        assert_int_equal(scen_records(&o, "fallback"), 1);
        assert_int_equal(dls_count(o.log, "synchronizing the producer's contexts (the current one and every "
                                          "device's) at export"),
                         1);
        assert_int_equal(dls_count(o.r.err, "dlsync: warning"), 1);
        assert_int_equal(dls_count(o.r.err, "fix synchronizes the producer's context at each export"), 1);
        assert_int_equal(dls_count(o.r.err, "CUPTI subscription held by CUPTI for othertool"), 1);
        scen_run_free(&o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_the_shim_the_racy_version_is_wrong),
        cmocka_unit_test(check_reports_each_hazard_once_with_both_sides),
        cmocka_unit_test(check_reports_say_what_to_change),
        cmocka_unit_test(trace_and_check_leave_stdout_unchanged),
        cmocka_unit_test(check_counts_kernel_pairs_and_lists_them_on_request),
        cmocka_unit_test(a_read_only_tensor_orders_nothing_for_consumer_reads),
        cmocka_unit_test(fix_corrects_the_racy_version_and_leaves_the_twin_alone),
        cmocka_unit_test(fix_orders_the_launch_of_a_captured_use),
        cmocka_unit_test(fix_records_on_the_producer_device_and_waits_on_the_consumer_stream),
        cmocka_unit_test(check_names_the_device_of_each_side),
        cmocka_unit_test(failing_shim_cuda_calls_keep_the_output_correct),
        cmocka_unit_test(the_summary_counts_ops_reports_and_injections),
        cmocka_unit_test(without_an_observer_fix_synchronizes_at_export),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
