/* Tests of the public C API (dlsync.h) with the real libdlsync.so preloaded into this program,
 * on the CUDA simulator, with a fake legacy producer (fakeprod.h).
 *
 * Run without DLS_API_CHILD, the binary runs itself again once per setting: DLSYNC_MODE fix,
 * check and trace with the shim preloaded, and once without the shim ("absent"). The functions
 * are looked up with dlsym(RTLD_DEFAULT), as dlsync.h recommends for programs that may run
 * without the shim. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cudasim.h"
#include "dls_test.h"
#include "dlsync.h"
#include "fakeprod.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 8

static struct {
    dlsync_status_string_fn status_string;
    dlsync_to_dlpack_fn to_dlpack;
    dlsync_to_dlpack_into_fn to_dlpack_into;
    dlsync_device_fn device;
    dlsync_make_safe_fn make_safe;
    dlsync_make_safe_unversioned_fn make_safe_unversioned;
    dlsync_current_work_stream_fn current_work_stream;
    dlsync_set_consumer_stream_fn set_consumer_stream;
    dlsync_clear_consumer_stream_fn clear_consumer_stream;
} api;

static const char *g_mode;
static cudaStream_t g_consumer;

static int modelled(void)
{
    return strcmp(g_mode, "fix") == 0 || strcmp(g_mode, "check") == 0;
}

static int setup(void **state)
{
    (void)state;
#define LOOKUP(f) *(void **)&api.f = dlsym(RTLD_DEFAULT, "dlsync_" #f)
    LOOKUP(status_string);
    LOOKUP(to_dlpack);
    LOOKUP(to_dlpack_into);
    LOOKUP(device);
    LOOKUP(make_safe);
    LOOKUP(make_safe_unversioned);
    LOOKUP(current_work_stream);
    LOOKUP(set_consumer_stream);
    LOOKUP(clear_consumer_stream);
#undef LOOKUP
    if (!api.status_string || !api.to_dlpack || !api.to_dlpack_into || !api.device || !api.make_safe ||
        !api.make_safe_unversioned || !api.current_work_stream || !api.set_consumer_stream ||
        !api.clear_consumer_stream)
        return -1;
    return cudaStreamCreateWithFlags(&g_consumer, cudaStreamNonBlocking) == cudaSuccess ? 0 : -1;
}

static void status_strings_are_distinct(void **state)
{
    (void)state;
    for (int a = DLSYNC_OK; a <= DLSYNC_ERR_MEMORY; a++) {
        assert_non_null(api.status_string(a));
        assert_string_not_equal(api.status_string(a), api.status_string(-1));
        for (int b = a + 1; b <= DLSYNC_ERR_MEMORY; b++)
            assert_string_not_equal(api.status_string(a), api.status_string(b));
    }
    assert_string_equal(api.status_string(99), "unknown dlsync status");
}

static void null_arguments_are_rejected(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    DLManagedTensorVersioned *out = NULL, into;
    DLDevice dev;
    int before = fp_deleter_calls();
    assert_int_equal(api.to_dlpack(NULL, a, 1, &out), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.to_dlpack("mxnet", NULL, 1, &out), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.to_dlpack("mxnet", a, 1, NULL), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.to_dlpack_into("mxnet", a, 1, NULL), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.to_dlpack_into(NULL, a, 1, &into), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.device(NULL, a, &dev), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.device("mxnet", NULL, &dev), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.device("mxnet", a, NULL), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.make_safe(NULL, 1), DLSYNC_ERR_ARGUMENT);
    assert_int_equal(api.make_safe_unversioned(NULL, 1), DLSYNC_ERR_ARGUMENT);
    assert_null(out);
    assert_int_equal(fp_deleter_calls(), before); /* nothing was exported */
    fp_free(a);
}

static void bad_stream_values_are_rejected(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    DLManagedTensorVersioned *out = NULL;
    long *heap = calloc(8, sizeof(long)); /* aligned memory that is no stream */
    const intptr_t garbage[] = {-2, -7, INTPTR_MIN, 0x1003, (intptr_t)heap};
    assert_int_equal(api.to_dlpack("mxnet", a, 0, &out), DLSYNC_ERR_STREAM_ZERO);
    assert_int_equal(api.set_consumer_stream(0), DLSYNC_ERR_STREAM_ZERO);
    for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
        assert_int_equal(api.to_dlpack("mxnet", a, garbage[i], &out), DLSYNC_ERR_STREAM);
        assert_int_equal(api.set_consumer_stream(garbage[i]), DLSYNC_ERR_STREAM);
    }
    assert_null(out);
    assert_int_equal(api.set_consumer_stream(-1), DLSYNC_OK);
    free(heap);
    fp_free(a);
}

static void unknown_or_unloaded_producers(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    DLManagedTensorVersioned *out = NULL;
    DLDevice dev;
    assert_int_equal(api.to_dlpack("nosuch", a, 1, &out), DLSYNC_ERR_NO_PRODUCER);
    assert_int_equal(api.to_dlpack("pytorch", a, 1, &out), DLSYNC_ERR_NO_PRODUCER);             /* not loaded */
    assert_int_equal(api.to_dlpack("MXNDArrayFromDLPack", a, 1, &out), DLSYNC_ERR_NO_PRODUCER); /* an import */
    assert_int_equal(api.device("nosuch", a, &dev), DLSYNC_ERR_NO_PRODUCER);
    assert_null(out);
    fp_free(a);
}

static void failing_export_is_reported(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    DLManagedTensorVersioned *out = NULL;
    fp_fail_next_export();
    assert_int_equal(api.to_dlpack("mxnet", a, 1, &out), DLSYNC_ERR_PRODUCER);
    assert_null(out);
    fp_fail_next_export();
    assert_int_equal(api.to_dlpack("tvm-ffi", a, DLSYNC_STREAM_NO_SYNC, &out), DLSYNC_ERR_PRODUCER);
    assert_null(out);
    fp_free(a);
}

static void unversioned_export_is_wrapped(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    const char *names[] = {"mxnet", "MXNDArrayToDLPack"};
    for (int k = 0; k < 2; k++) {
        DLManagedTensorVersioned *t = NULL;
        int before = fp_deleter_calls();
        assert_int_equal(api.to_dlpack(names[k], a, (intptr_t)g_consumer, &t), DLSYNC_OK);
        assert_non_null(t);
        assert_int_equal(t->version.major, 1);
        assert_int_equal(t->version.minor, DLSYNC_DLPACK_MINOR);
        assert_int_equal(t->flags, 0);
        assert_int_equal(t->dl_tensor.ndim, 1);
        assert_int_equal(t->dl_tensor.shape[0], N);
        assert_int_equal(t->dl_tensor.device.device_type, kDLCUDA);
        assert_int_equal(t->dl_tensor.dtype.bits, 32);
        assert_non_null(t->manager_ctx);
        assert_int_equal(fp_deleter_calls(), before);
        t->deleter(t);
        assert_int_equal(fp_deleter_calls(), before + 1);
    }
    fp_free(a);
}

static void versioned_export_keeps_version_and_flags(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    DLManagedTensorVersioned *t = NULL;
    int before = fp_deleter_calls();
    assert_int_equal(api.to_dlpack("tvm-ffi", a, DLSYNC_STREAM_LEGACY, &t), DLSYNC_OK);
    assert_int_equal(t->version.major, 1);
    assert_int_equal(t->version.minor, 3);
    assert_int_equal(t->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
    t->deleter(t);
    assert_int_equal(fp_deleter_calls(), before + 1);
    fp_next_major(2);
    t = NULL;
    assert_int_equal(api.to_dlpack("tvm-ffi", a, DLSYNC_STREAM_LEGACY, &t), DLSYNC_ERR_VERSION);
    assert_null(t);
    assert_int_equal(fp_deleter_calls(), before + 2); /* the refused tensor was released */
    fp_free(a);
}

static void into_form_fills_the_callers_struct(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    const char *names[] = {"mxnet", "tvm-ffi"};
    for (int k = 0; k < 2; k++) {
        DLManagedTensorVersioned into;
        memset(&into, 0xab, sizeof into);
        int before = fp_deleter_calls();
        assert_int_equal(api.to_dlpack_into(names[k], a, DLSYNC_STREAM_PER_THREAD, &into), DLSYNC_OK);
        assert_int_equal(into.version.major, 1);
        assert_int_equal(into.flags, k ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
        assert_int_equal(into.dl_tensor.shape[0], N);
        assert_non_null(into.deleter);
        into.deleter(&into);
        into.deleter(&into); /* a second call does nothing */
        assert_int_equal(fp_deleter_calls(), before + 1);
    }
    fp_free(a);
}

static void device_query_releases_its_tensor(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    DLDevice dev = {kDLCPU, 7};
    int before = fp_deleter_calls();
    assert_int_equal(api.device("mxnet", a, &dev), DLSYNC_OK);
    assert_int_equal(dev.device_type, kDLCUDA);
    assert_int_equal(dev.device_id, 0);
    assert_int_equal(api.device("tvm-ffi", a, &dev), DLSYNC_OK);
    assert_int_equal(fp_deleter_calls(), before + 2);
    fp_fail_next_export();
    assert_int_equal(api.device("mxnet", a, &dev), DLSYNC_ERR_PRODUCER);
    fp_free(a);
}

/* A tensor made by the test itself (no wrapped export saw it). */
static int g_own_deletes;
static int64_t g_own_shape[1] = {N};
static void own_deleter_v(DLManagedTensorVersioned *self)
{
    (void)self;
    g_own_deletes++;
}
static void own_deleter_u(DLManagedTensor *self)
{
    (void)self;
    g_own_deletes++;
}

static void make_safe_takes_foreign_tensors(void **state)
{
    (void)state;
    fp_array *a = fp_new(N);
    DLManagedTensor *legacy;
    assert_int_equal(MXNDArrayToDLPack(a, &legacy), 0); /* any DLTensor on device memory */
    DLManagedTensorVersioned v = {.version = {1, 2}, .deleter = own_deleter_v, .dl_tensor = legacy->dl_tensor};
    DLManagedTensor u = {.deleter = own_deleter_u, .dl_tensor = legacy->dl_tensor};
    v.dl_tensor.shape = u.dl_tensor.shape = g_own_shape;
    g_own_deletes = 0;
    assert_int_equal(api.make_safe(&v, DLSYNC_STREAM_NO_SYNC), DLSYNC_OK);
    assert_int_equal(api.make_safe(&v, (intptr_t)g_consumer), DLSYNC_OK);
    assert_int_equal(api.make_safe_unversioned(&u, DLSYNC_STREAM_LEGACY), DLSYNC_OK);
    assert_int_equal(api.make_safe(&v, 0), DLSYNC_ERR_STREAM_ZERO);
    v.deleter(&v);
    u.deleter(&u);
    assert_int_equal(g_own_deletes, 2); /* each original deleter exactly once */
    DLManagedTensorVersioned bad = v;
    bad.version.major = 2;
    assert_int_equal(api.make_safe(&bad, DLSYNC_STREAM_LEGACY), DLSYNC_ERR_VERSION);
    bad = v;
    bad.dl_tensor.ndim = -1;
    assert_int_equal(api.make_safe(&bad, DLSYNC_STREAM_LEGACY), DLSYNC_ERR_TENSOR);
    legacy->deleter(legacy);
    fp_free(a);
}

/* Body of current_work_stream_follows_exports, on a thread of its own. */
static void *work_stream_thread(void *arg)
{
    int *ok = arg;
    void *s = (void *)0x5;
    fp_array *a = fp_new(N);
    ok[0] = api.current_work_stream(kDLCUDA, 0, &s) == 0 && s == (void *)cudaStreamLegacy;
    DLManagedTensorVersioned *t = NULL;
    fp_write(a, 3);
    ok[1] = api.to_dlpack("mxnet", a, DLSYNC_STREAM_NO_SYNC, &t) == DLSYNC_OK;
    cudaStreamSynchronize(fp_side_stream());
    ok[2] = api.current_work_stream(kDLCUDA, 0, &s) == 0 &&
            s == (modelled() ? (void *)fp_side_stream() : (void *)cudaStreamLegacy);
    if (t)
        t->deleter(t);
    fp_free(a);
    return NULL;
}

static void current_work_stream_follows_exports(void **state)
{
    (void)state;
    void *s = (void *)0x5;
    assert_int_equal(api.current_work_stream(kDLCUDA, 0, NULL), -1);
    assert_int_equal(api.current_work_stream(kDLCUDA, -1, &s), -1);
    assert_int_equal(api.current_work_stream(kDLROCM, 0, &s), -1);
    assert_int_equal(api.current_work_stream(kDLCPU, 0, &s), 0);
    assert_null(s);
    int ok[3] = {0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, work_stream_thread, ok), 0);
    pthread_join(th, NULL);
    assert_true(ok[0]);
    assert_true(ok[1]);
    assert_true(ok[2]);
}

/* Opens the side stream's gate after 100 ms. Without a model (trace) the handover's host
 * synchronize waits for it; a consumer read made without that wait runs before and sees the
 * array's zeros. */
static void *release_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 100 * 1000000};
    nanosleep(&ts, NULL);
    cudasim_stream_release(fp_side_stream());
    return NULL;
}

/* The device current for the handover and the consumer's read (the producer's side stream and
 * its array are on device 0). */
static int g_consumer_device;

/* Producer writes 42 on its held side stream (opened by release_later without a model); `get` hands the tensor over for
 * `stream`, with device g_consumer_device current; the consumer reads it on `on`. Returns what
 * the consumer saw; *rc is get's status, or -2 when the consumer read before the producer could
 * run. */
typedef int (*handover)(fp_array *a, intptr_t stream, DLManagedTensorVersioned *slot, const float **data);

static float exchange(handover get, intptr_t stream, cudaStream_t on, int *rc)
{
    int hold = modelled();
    fp_array *a = fp_new(N);
    float *seen;
    assert_int_equal(cudaMallocHost((void **)&seen, N * sizeof(float)), cudaSuccess);
    for (int i = 0; i < N; i++)
        seen[i] = -1;
    pthread_t releaser;
    cudasim_stream_hold(fp_side_stream());
    assert_int_equal(fp_write(a, 42), 0);
    if (!hold)
        assert_int_equal(pthread_create(&releaser, NULL, release_later, NULL), 0);
    assert_int_equal(cudaSetDevice(g_consumer_device), cudaSuccess);
    DLManagedTensorVersioned slot;
    const float *data = NULL;
    *rc = get(a, stream, &slot, &data);
    if (*rc == DLSYNC_OK)
        assert_int_equal(fp_read(on, data, seen, N), 0);
    if (hold) {
        cudasim_settle();
        if (*rc == DLSYNC_OK && seen[0] != -1.0f)
            *rc = -2; /* the consumer did not wait for the producer */
        cudasim_stream_release(fp_side_stream());
    } else {
        pthread_join(releaser, NULL);
    }
    cudaDeviceSynchronize();
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    cudaDeviceSynchronize();
    float v = seen[N - 1];
    if (slot.deleter && *rc == DLSYNC_OK)
        slot.deleter(&slot);
    cudaFreeHost(seen);
    fp_free(a);
    return v;
}

static int by_to_dlpack(fp_array *a, intptr_t stream, DLManagedTensorVersioned *slot, const float **data)
{
    DLManagedTensorVersioned *t = NULL;
    int rc = api.to_dlpack("mxnet", a, stream, &t);
    if (rc == DLSYNC_OK) {
        *data = t->dl_tensor.data;
        *slot = (DLManagedTensorVersioned){.manager_ctx = t, .deleter = NULL};
        t->deleter(t); /* the data stays valid: the array still owns it */
    }
    slot->deleter = NULL;
    return rc;
}

static int by_into(fp_array *a, intptr_t stream, DLManagedTensorVersioned *slot, const float **data)
{
    slot->deleter = NULL;
    int rc = api.to_dlpack_into("tvm-ffi", a, stream, slot);
    if (rc == DLSYNC_OK)
        *data = slot->dl_tensor.data;
    return rc;
}

static int by_make_safe(fp_array *a, intptr_t stream, DLManagedTensorVersioned *slot, const float **data)
{
    DLManagedTensor *t;
    slot->deleter = NULL;
    if (MXNDArrayToDLPack(a, &t))
        return -3;
    int rc = api.make_safe_unversioned(t, stream);
    *data = t->dl_tensor.data;
    t->deleter(t);
    return rc;
}

static int by_consumer_stream(fp_array *a, intptr_t stream, DLManagedTensorVersioned *slot, const float **data)
{
    DLManagedTensor *t;
    slot->deleter = NULL;
    int rc = api.set_consumer_stream(stream);
    if (rc == DLSYNC_OK && MXNDArrayToDLPack(a, &t) == 0) {
        *data = t->dl_tensor.data;
        t->deleter(t);
    }
    api.clear_consumer_stream();
    return rc;
}

/* Every handover form, for stream `consumer` and the two default streams, with device `device`
 * current for the handover and the consumer's read: the consumer sees the producer's data. */
static void every_handover_is_safe(cudaStream_t consumer, int device)
{
    const struct {
        intptr_t value;
        cudaStream_t on;
    } streams[] = {
        {(intptr_t)consumer, consumer},
        {DLSYNC_STREAM_LEGACY, cudaStreamLegacy},
        {DLSYNC_STREAM_PER_THREAD, cudaStreamPerThread},
    };
    const handover forms[] = {by_to_dlpack, by_into, by_make_safe};
    g_consumer_device = device;
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++)
        for (size_t s = 0; s < sizeof streams / sizeof *streams; s++) {
            int rc;
            float v = exchange(forms[f], streams[s].value, streams[s].on, &rc);
            if (rc != DLSYNC_OK || v != 42.0f)
                fail_msg("device %d, form %zu, stream %zu: status %d, consumer read %g", device, f, s, rc, v);
        }
    g_consumer_device = 0;
}

static void tensor_is_safe_on_the_requested_stream(void **state)
{
    (void)state;
    every_handover_is_safe(g_consumer, 0);
}

/* The same with device 1 current and the consumer on a device-1 stream: the ordering is made
 * across devices (the event in the producer's context, the wait on the consumer's stream), and
 * without a model (trace) the fallback synchronizes every device, not just the current one. */
static void tensor_is_safe_for_a_stream_of_another_device(void **state)
{
    (void)state;
    cudaStream_t c1;
    fp_side_stream(); /* made on device 0 */
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&c1, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    every_handover_is_safe(c1, 1);
    cudaStreamDestroy(c1);
}

static void thread_consumer_stream_orders_legacy_exports(void **state)
{
    (void)state;
    if (strcmp(g_mode, "fix") != 0)
        skip();
    int rc;
    float v = exchange(by_consumer_stream, (intptr_t)g_consumer, g_consumer, &rc);
    assert_int_equal(rc, DLSYNC_OK);
    assert_true(v == 42.0f);
}

/* Without the API the same exchange races: this is what the tests above would see if the
 * ordering were missing (check mode reports but does not order). */
static int by_legacy_call(fp_array *a, intptr_t stream, DLManagedTensorVersioned *slot, const float **data)
{
    (void)stream;
    DLManagedTensor *t;
    slot->deleter = NULL;
    if (MXNDArrayToDLPack(a, &t))
        return -3;
    *data = t->dl_tensor.data;
    t->deleter(t);
    return DLSYNC_OK;
}

static void legacy_exchange_races_without_the_api(void **state)
{
    (void)state;
    if (strcmp(g_mode, "check") != 0)
        skip();
    int rc;
    exchange(by_legacy_call, 0, g_consumer, &rc);
    assert_int_equal(rc, -2);
}

static void functions_are_absent_without_the_shim(void **state)
{
    (void)state;
    assert_null(dlsym(RTLD_DEFAULT, "dlsync_to_dlpack"));
    assert_null(dlsym(RTLD_DEFAULT, "dlsync_current_work_stream"));
}

/* Runs this binary again with DLS_API_CHILD=setting (and the shim preloaded unless "absent"). */
static int run_child(const char *self, const char *setting)
{
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        char shim[1024], cupti[1024], preload[2048];
        dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
        dls_build_path(cupti, sizeof cupti, "cudasim/libcupti.so.13");
        setenv("DLS_API_CHILD", setting, 1);
        setenv("CUDASIM_DEVICES", "2", 1);
        unsetenv("CUDA_INJECTION64_PATH");
        unsetenv("DLSYNC_LOG");
        unsetenv("DLSYNC_PROFILES");
        if (strcmp(setting, "absent") != 0) {
            setenv("LD_PRELOAD", dls_preload_value(preload, sizeof preload, shim), 1);
            setenv("DLSYNC_CUPTI", cupti, 1);
            setenv("DLSYNC_MODE", setting, 1);
        } else {
            unsetenv("LD_PRELOAD");
        }
        execl(self, self, (char *)NULL);
        _exit(127);
    }
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *child = getenv("DLS_API_CHILD");
    if (!child) {
        int failed = 0;
        const char *settings[] = {"fix", "check", "trace", "absent"};
        for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
            failed |= run_child("/proc/self/exe", settings[i]);
        (void)argv;
        return failed;
    }
    if (strcmp(child, "absent") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(functions_are_absent_without_the_shim)};
        return cmocka_run_group_tests_name("api without the shim", tests, NULL, NULL);
    }
    g_mode = child;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_strings_are_distinct),
        cmocka_unit_test(null_arguments_are_rejected),
        cmocka_unit_test(bad_stream_values_are_rejected),
        cmocka_unit_test(unknown_or_unloaded_producers),
        cmocka_unit_test(failing_export_is_reported),
        cmocka_unit_test(unversioned_export_is_wrapped),
        cmocka_unit_test(versioned_export_keeps_version_and_flags),
        cmocka_unit_test(into_form_fills_the_callers_struct),
        cmocka_unit_test(device_query_releases_its_tensor),
        cmocka_unit_test(make_safe_takes_foreign_tensors),
        cmocka_unit_test(current_work_stream_follows_exports),
        cmocka_unit_test(tensor_is_safe_on_the_requested_stream),
        cmocka_unit_test(tensor_is_safe_for_a_stream_of_another_device),
        cmocka_unit_test(thread_consumer_stream_orders_legacy_exports),
        cmocka_unit_test(legacy_exchange_races_without_the_api),
    };
    char name[64];
    snprintf(name, sizeof name, "api, DLSYNC_MODE=%s", child);
    return cmocka_run_group_tests_name(name, tests, setup, NULL);
}
