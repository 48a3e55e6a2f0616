/* Unit tests of the fix lines of race reports (shim/report/advice.c): the exact text of every
 * row, for each way of exchanging and each race kind with a fix of its own; streams written as
 * C expressions, dlsync.h stream values and Python integers; names the race does not know; an
 * unknown way; a buffer too small. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "report/advice.h"
#include "report/race.h"

/* A write-read race from mxnet's MXNDArrayToDLPack: scen_write on a non-blocking stream, scen_read
 * on another. */
static dls_race racy(dls_race_kind kind, dls_xpath path)
{
    dls_race r = {.kind = kind, .path = path, .framework = "mxnet", .symbol = "MXNDArrayToDLPack"};
    r.producer.op = "scen_write";
    r.producer.stream = (dls_race_stream){.id = 2, .handle = 0x5000, .kind = "non-blocking"};
    r.consumer.op = "scen_read";
    r.consumer.stream = (dls_race_stream){.id = 3, .handle = 0x6000, .kind = "non-blocking"};
    return r;
}

static void expect(const dls_race *r, const char *fix, const char *text)
{
    char buf[1024];
    assert_string_equal(dls_advice(r, buf, sizeof buf), fix);
    assert_string_equal(buf, text);
}

static void legacy_c_entry_points_get_dlsync_to_dlpack_or_an_event_wait(void **state)
{
    (void)state;
    static const dls_race_kind kinds[] = {DLS_RACE_WRITE_READ, DLS_RACE_READ_WRITE, DLS_RACE_WRITE_WRITE};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        dls_race r = racy(kinds[i], DLS_XPATH_NATIVE);
        expect(&r, "consumer-stream",
               "get the tensor for the consumer's stream with dlsync_to_dlpack(\"mxnet\", handle, (intptr_t)0x6000, "
               "&t) (dlsync.h) instead of MXNDArrayToDLPack, or cudaEventRecord(ev, (cudaStream_t)0x5000) after "
               "scen_write and cudaStreamWaitEvent((cudaStream_t)0x6000, ev, 0) before scen_read");
    }
}

static void default_streams_are_named_as_code_names_them(void **state)
{
    (void)state;
    dls_race r = racy(DLS_RACE_WRITE_READ, DLS_XPATH_NATIVE);
    r.producer.stream.kind = "per-thread";
    r.consumer.stream.kind = "legacy";
    expect(&r, "consumer-stream",
           "get the tensor for the consumer's stream with dlsync_to_dlpack(\"mxnet\", handle, DLSYNC_STREAM_LEGACY, "
           "&t) (dlsync.h) instead of MXNDArrayToDLPack, or cudaEventRecord(ev, cudaStreamPerThread) after "
           "scen_write and cudaStreamWaitEvent(cudaStreamLegacy, ev, 0) before scen_read");
    r.path = DLS_XPATH_PROTOCOL;
    r.consumer.stream.kind = "per-thread";
    char buf[1024];
    dls_advice(&r, buf, sizeof buf);
    assert_non_null(strstr(buf, "x.__dlpack__(stream=2)"));
}

static void the_python_protocol_gets_the_consumers_stream(void **state)
{
    (void)state;
    dls_race r = racy(DLS_RACE_WRITE_READ, DLS_XPATH_PROTOCOL);
    r.framework = "torch";
    expect(&r, "dlpack-stream",
           "pass the consumer's stream to the producer: x.__dlpack__(stream=0x6000), so that torch orders "
           "scen_write before it, or call torch.from_dlpack(x) while (cudaStream_t)0x6000 is the current stream "
           "(with torch.cuda.stream(...))");
}

static void unversioned_capsules_cannot_carry_a_stream(void **state)
{
    (void)state;
    dls_race r = racy(DLS_RACE_WRITE_READ, DLS_XPATH_LEGACY_CAPSULE);
    r.framework = "cupy";
    expect(&r, "capsule-sync",
           "an unversioned capsule from cupy (a legacy to_dlpack(), or __dlpack__() given no stream) carries no "
           "stream: pass the object itself to from_dlpack, so that __dlpack__(stream=0x6000) orders scen_write "
           "before the consumer's stream, or synchronize (cudaStream_t)0x5000 after scen_write "
           "(cudaStreamSynchronize, torch.cuda.current_stream().synchronize()) before making the capsule");
}

static void host_reads_and_release_reuse_have_one_fix_whatever_the_way(void **state)
{
    (void)state;
    for (int path = 0; path < DLS_XPATH_N_; path++) {
        dls_race r = racy(DLS_RACE_HOST_READ, (dls_xpath)path);
        r.producer.op = "cudaMemcpyAsync_v3020";
        r.consumer.op = "host access after TVMArrayFromDLPack";
        r.consumer.stream = (dls_race_stream){.host = 1, .kind = "host"};
        expect(&r, "host-sync",
               "synchronize the producer's stream before the host reads the tensor: "
               "cudaStreamSynchronize((cudaStream_t)0x5000) after cudaMemcpyAsync_v3020, or cudaEventSynchronize "
               "on an event recorded there");
        r = racy(DLS_RACE_RELEASE_REUSE, (dls_xpath)path);
        expect(&r, "keep-alive",
               "keep the tensor alive until the consumer's stream finishes scen_read: release it after "
               "cudaStreamSynchronize((cudaStream_t)0x6000), or cudaEventRecord(ev, (cudaStream_t)0x6000) and "
               "cudaStreamWaitEvent((cudaStream_t)0x5000, ev, 0) before scen_write reuses the memory "
               "(record_stream-like ordering, as torch's tensor.record_stream(consumer_stream))");
    }
}

static void unknown_names_and_ways_still_give_a_fix(void **state)
{
    (void)state;
    dls_race r = racy(DLS_RACE_WRITE_READ, (dls_xpath)99);
    r.framework = r.symbol = r.producer.op = r.consumer.op = NULL;
    expect(&r, "consumer-stream",
           "get the tensor for the consumer's stream with dlsync_to_dlpack(\"the producer\", handle, "
           "(intptr_t)0x6000, &t) (dlsync.h) instead of the producer's to_dlpack, or cudaEventRecord(ev, "
           "(cudaStream_t)0x5000) after the producer's operation and cudaStreamWaitEvent((cudaStream_t)0x6000, ev, "
           "0) before the consumer's operation");
}

static void a_short_buffer_gets_the_beginning(void **state)
{
    (void)state;
    dls_race r = racy(DLS_RACE_WRITE_READ, DLS_XPATH_NATIVE);
    char buf[80];
    memset(buf, 'x', sizeof buf);
    assert_string_equal(dls_advice(&r, buf, 61), "consumer-stream");
    assert_string_equal(buf, "get the tensor for the consumer's stream with dlsync_to_dlpa"); /* 60 characters */
    assert_int_equal(buf[61], 'x');
    assert_string_equal(dls_advice(&r, buf, 0), "consumer-stream");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(legacy_c_entry_points_get_dlsync_to_dlpack_or_an_event_wait),
        cmocka_unit_test(default_streams_are_named_as_code_names_them),
        cmocka_unit_test(the_python_protocol_gets_the_consumers_stream),
        cmocka_unit_test(unversioned_capsules_cannot_carry_a_stream),
        cmocka_unit_test(host_reads_and_release_reuse_have_one_fix_whatever_the_way),
        cmocka_unit_test(unknown_names_and_ways_still_give_a_fix),
        cmocka_unit_test(a_short_buffer_gets_the_beginning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
