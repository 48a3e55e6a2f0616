/* Unit tests of shim/cuda/callback.c: delivery at ENTER and EXIT, each call one way (the work
 * lane or the op lane), the context current during a delivery, the ENTER gate, one operation per
 * runtime call and the driver call beneath it, the re-entrancy guard, id retirement at destroy,
 * formatting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "test_cuda_fake.h"

#include "cuda/callback.h"
#include "cuda/identity.h"
#include "cuda/ranges.h"
#include "cuda/thread.h"

#define DCB(name) CUPTI_DRIVER_TRACE_CBID_##name
#define RCB(name) CUPTI_RUNTIME_TRACE_CBID_##name

#define MAX_SEEN 16
static dls_cuda_op seen[MAX_SEEN];
static dls_cuda_range seen_ranges[MAX_SEEN];
static char seen_api[MAX_SEEN][64];
static int nseen, nworks, ncalls, ncalls_nested;
static void (*also)(const dls_cuda_op *op);

/* Keeps op as the nseen-th delivery. */
static void record(const dls_cuda_op *op)
{
    if (nseen < MAX_SEEN) {
        seen[nseen] = *op;
        if (op->nranges)
            seen_ranges[nseen] = op->ranges[0];
        snprintf(seen_api[nseen], sizeof seen_api[nseen], "%s", op->api ? op->api : "");
    }
    nseen++;
    if (also)
        also(op);
}

static void on_op(const dls_cuda_op *op)
{
    record(op);
}

/* Keeps a work as the op the op lane would have delivered for it (its stream, its flags with
 * DLS_OPF_HAS_STREAM). */
static void on_work(const dls_cuda_work *w)
{
    dls_cuda_op op = {.kind = w->kind,
                      .phase = w->phase,
                      .result = w->result,
                      .flags = w->flags | DLS_OPF_HAS_STREAM,
                      .api = w->api,
                      .name = w->name,
                      .tid = w->tid,
                      .correlation_id = w->correlation_id,
                      .nested = w->nested,
                      .stream = *w->stream,
                      .ranges = w->ranges,
                      .nranges = w->nranges,
                      .words = w->words,
                      .nwords = w->nwords};
    nworks++;
    record(&op);
}

/* Counts the calls the lifetime lane tells of, and those nested. */
static void on_lifetime(int nested)
{
    ncalls++;
    ncalls_nested += nested != 0;
}

/* The receivers of most tests: every lane recorded, no gate. */
static const dls_cuda_receivers g_receivers = {.op = on_op, .work = on_work, .lifetime = on_lifetime};

static int setup(void **state)
{
    (void)state;
    fake_reset();
    dls_cuda_streams_invalidate();
    dls_cuda_thread *t = dls_cuda_thread_self(); /* no call left open by an earlier test */
    t->rt_depth = 0;
    t->nopen = 0;
    nseen = nworks = ncalls = ncalls_nested = 0;
    also = NULL;
    dls_cuda_set_receivers(&g_receivers);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dls_cuda_set_receivers(NULL);
    dls_cuda_callback_set_debug(0);
    return 0;
}

static void call(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, const char *fn,
                 const void *params)
{
    CUpti_CallbackData cb = fake_cb(site, fn, params);
    dls_cuda_callback(NULL, dom, cbid, &cb);
}

/* While nothing is watched the ENTER of stream work is not delivered, its EXIT is; other calls'
 * ENTERs always are; with something watched again, every ENTER is. */
static void the_enter_gate_holds_back_only_stream_work(void **state)
{
    (void)state;
    static atomic_int watching;
    static const dls_cuda_receivers gated = {
        .op = on_op, .work = on_work, .lifetime = on_lifetime, .watching = &watching};
    atomic_store(&watching, 0);
    dls_cuda_set_receivers(&gated);
    cuMemsetD8Async_params p = {.dstDevice = 0x1000, .uc = 1, .N = 64};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_ENTER, "cuMemsetD8Async", &p);
    assert_int_equal(nseen, 0);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_EXIT, "cuMemsetD8Async", &p);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].phase, DLS_PHASE_EXIT);
    assert_int_equal(seen[0].kind, DLS_OP_MEMSET);
    assert_int_equal(seen_ranges[0].addr, 0x1000);
    cuStreamSynchronize_params sp = {.hStream = (CUstream)0x5000};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamSynchronize), CUPTI_API_ENTER, "cuStreamSynchronize", &sp);
    assert_int_equal(nseen, 2);
    assert_int_equal(seen[1].phase, DLS_PHASE_ENTER);
    atomic_store(&watching, 1);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_ENTER, "cuMemsetD8Async", &p);
    assert_int_equal(nseen, 3);
    assert_int_equal(seen[2].phase, DLS_PHASE_ENTER);
}

static void call_corr(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, const char *fn, const void *params,
                      uint32_t corr)
{
    CUpti_CallbackData cb = fake_cb(site, fn, params);
    cb.correlationId = corr;
    dls_cuda_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
}

/* A driver call made while another driver call of the thread is open (from a callback of it) is
 * delivered as nested at both phases, the outer call's are not; an outer call whose ENTER the
 * gate held back still counts as open. */
static void a_call_inside_another_is_nested(void **state)
{
    (void)state;
    cuStreamSynchronize_params sp = {.hStream = (CUstream)0x5000};
    cuMemsetD8Async_params mp = {.dstDevice = 0x1000, .uc = 1, .N = 64};
    call_corr(DCB(cuStreamSynchronize), CUPTI_API_ENTER, "cuStreamSynchronize", &sp, 10);
    call_corr(DCB(cuMemsetD8Async), CUPTI_API_ENTER, "cuMemsetD8Async", &mp, 11);
    call_corr(DCB(cuMemsetD8Async), CUPTI_API_EXIT, "cuMemsetD8Async", &mp, 11);
    call_corr(DCB(cuStreamSynchronize), CUPTI_API_EXIT, "cuStreamSynchronize", &sp, 10);
    assert_int_equal(nseen, 4);
    assert_int_equal(seen[0].nested, 0);
    assert_int_equal(seen[1].nested, 1);
    assert_int_equal(seen[2].nested, 1);
    assert_int_equal(seen[3].nested, 0);
    static atomic_int watching; /* 0: the memset's ENTER is held back */
    static const dls_cuda_receivers gated = {
        .op = on_op, .work = on_work, .lifetime = on_lifetime, .watching = &watching};
    dls_cuda_set_receivers(&gated);
    call_corr(DCB(cuMemsetD8Async), CUPTI_API_ENTER, "cuMemsetD8Async", &mp, 20);
    call_corr(DCB(cuStreamSynchronize), CUPTI_API_ENTER, "cuStreamSynchronize", &sp, 21);
    call_corr(DCB(cuStreamSynchronize), CUPTI_API_EXIT, "cuStreamSynchronize", &sp, 21);
    call_corr(DCB(cuMemsetD8Async), CUPTI_API_EXIT, "cuMemsetD8Async", &mp, 20);
    dls_cuda_set_receivers(&g_receivers);
    assert_int_equal(nseen, 7);
    assert_int_equal(seen[4].nested, 1);
    assert_int_equal(seen[5].nested, 1);
    assert_int_equal(seen[6].nested, 0);
    call_corr(DCB(cuMemsetD8Async), CUPTI_API_EXIT, "cuMemsetD8Async", &mp, 30); /* its ENTER was never seen */
    assert_int_equal(seen[7].nested, 0);
}

/* Each call reaches one receiver at each phase: the launches, asynchronous linear copies and
 * sets the work lane's, as a work with its stream resolved; every other call the op lane's, as an
 * op. */
static void each_call_takes_one_way(void **state)
{
    (void)state;
    fake_streams[0] = (fake_stream){.h = (CUstream)0x5000, .id = 50};
    cuMemsetD8Async_params set = {.dstDevice = 0x1000, .uc = 1, .N = 64, .hStream = (CUstream)0x5000};
    cuMemsetD2D32Async_params set2d = {.dstDevice = 0x3000, .dstPitch = 256, .Width = 8, .Height = 3};
    cuMemsetD8_v2_params sync_set = {.dstDevice = 0x7000, .N = 4};
    cuMemcpyHtoDAsync_v2_params htod = {.dstDevice = 0x2000, .srcHost = (void *)0x9000, .ByteCount = 32};
    cuMemcpyAsync_ptsz_params any = {.dst = 0x4000, .src = 0x6000, .ByteCount = 16};
    uint64_t buf[1] = {0x5000};
    size_t size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    cuLaunchKernel_params launch = {.f = (CUfunction)0xf00, .extra = extra, .hStream = (CUstream)0x5000};
    cuMemcpyHtoD_v2_params sync_copy = {.dstDevice = 0x8000, .srcHost = (void *)0x9000, .ByteCount = 8};
    CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                       .srcDevice = 0xa000,
                       .srcPitch = 64,
                       .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                       .dstDevice = 0xb000,
                       .dstPitch = 64,
                       .WidthInBytes = 8,
                       .Height = 2};
    cuMemcpy2DAsync_v2_params copy2d = {.pCopy = &c, .hStream = (CUstream)0x5000};
    cuStreamSynchronize_params sync = {.hStream = (CUstream)0x5000};
    struct {
        CUpti_CallbackId cbid;
        const char *fn;
        const void *params;
        int work;
        dls_op_kind kind;
        uint64_t stream;
        uint32_t nranges;
        dls_cuda_range r0;
    } calls[] = {
        {DCB(cuMemsetD8Async), "cuMemsetD8Async", &set, 1, DLS_OP_MEMSET, 50, 1, {0x1000, 64, DLS_ACCESS_WRITE}},
        {DCB(cuMemsetD2D32Async),
         "cuMemsetD2D32Async",
         &set2d,
         1,
         DLS_OP_MEMSET,
         FAKE_LEGACY_ID,
         1,
         {0x3000, 2 * 256 + 32, DLS_ACCESS_WRITE}},
        {DCB(cuMemsetD8_v2),
         "cuMemsetD8_v2",
         &sync_set,
         1,
         DLS_OP_MEMSET,
         FAKE_LEGACY_ID,
         1,
         {0x7000, 4, DLS_ACCESS_WRITE}},
        {DCB(cuMemcpyHtoDAsync_v2),
         "cuMemcpyHtoDAsync_v2",
         &htod,
         1,
         DLS_OP_MEMCPY,
         FAKE_LEGACY_ID,
         2,
         {0x9000, 32, DLS_ACCESS_READ}},
        {DCB(cuMemcpyAsync_ptsz),
         "cuMemcpyAsync_ptsz",
         &any,
         1,
         DLS_OP_MEMCPY,
         FAKE_PER_THREAD_ID,
         2,
         {0x6000, 16, DLS_ACCESS_READ}},
        {DCB(cuLaunchKernel), "cuLaunchKernel", &launch, 1, DLS_OP_LAUNCH, 50, 0, {0}},
        {DCB(cuMemcpyHtoD_v2),
         "cuMemcpyHtoD_v2",
         &sync_copy,
         0,
         DLS_OP_MEMCPY,
         FAKE_LEGACY_ID,
         2,
         {0x9000, 8, DLS_ACCESS_READ}},
        {DCB(cuMemcpy2DAsync_v2),
         "cuMemcpy2DAsync_v2",
         &copy2d,
         0,
         DLS_OP_MEMCPY,
         50,
         2,
         {0xa000, 64 + 8, DLS_ACCESS_READ}},
        {DCB(cuStreamSynchronize), "cuStreamSynchronize", &sync, 0, DLS_OP_STREAM_SYNC, 50, 0, {0}},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        nseen = nworks = 0;
        call(CUPTI_CB_DOMAIN_DRIVER_API, calls[i].cbid, CUPTI_API_ENTER, calls[i].fn, calls[i].params);
        call(CUPTI_CB_DOMAIN_DRIVER_API, calls[i].cbid, CUPTI_API_EXIT, calls[i].fn, calls[i].params);
        assert_int_equal(nseen, 2);
        assert_int_equal(nworks, calls[i].work ? 2 : 0);
        for (int k = 0; k < 2; k++) {
            assert_int_equal(seen[k].phase, k ? DLS_PHASE_EXIT : DLS_PHASE_ENTER);
            assert_int_equal(seen[k].kind, calls[i].kind);
            assert_true(seen[k].flags & DLS_OPF_HAS_STREAM);
            assert_true(seen[k].stream.resolved);
            assert_int_equal(seen[k].stream.id, calls[i].stream);
            assert_int_equal(seen[k].nranges, calls[i].nranges);
            assert_int_equal(seen[k].correlation_id, 77);
            assert_string_equal(seen_api[k], calls[i].fn);
            if (calls[i].nranges) {
                assert_int_equal(seen_ranges[k].addr, calls[i].r0.addr);
                assert_int_equal(seen_ranges[k].len, calls[i].r0.len);
                assert_int_equal(seen_ranges[k].access, calls[i].r0.access);
            }
        }
        if (calls[i].kind == DLS_OP_MEMSET || calls[i].kind == DLS_OP_MEMCPY) /* only the sync forms wait */
            assert_int_equal((seen[1].flags & DLS_OPF_ASYNC) != 0, strstr(calls[i].fn, "Async") != NULL);
    }
    /* Under a runtime call, a work is named after it too. */
    nseen = 0;
    call(CUPTI_CB_DOMAIN_RUNTIME_API, RCB(cudaMemsetAsync_v3020), CUPTI_API_ENTER, "cudaMemsetAsync", NULL);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_EXIT, "cuMemsetD8Async", &set);
    call(CUPTI_CB_DOMAIN_RUNTIME_API, RCB(cudaMemsetAsync_v3020), CUPTI_API_EXIT, "cudaMemsetAsync", NULL);
    assert_int_equal(nseen, 1);
    assert_string_equal(seen_api[0], "cudaMemsetAsync");
}

static void ignore_work(const dls_cuda_work *w)
{
    (void)w;
}

/* The work lane's calls reach its receiver only, never the op lane's. */
static void the_lane_calls_never_reach_the_op_receiver(void **state)
{
    (void)state;
    static const dls_cuda_receivers no_work = {.op = on_op, .work = ignore_work, .lifetime = on_lifetime};
    dls_cuda_set_receivers(&no_work);
    cuMemsetD8Async_params set = {.dstDevice = 0x1000, .uc = 1, .N = 64};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_ENTER, "cuMemsetD8Async", &set);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_EXIT, "cuMemsetD8Async", &set);
    assert_int_equal(nseen, 0);
    cuStreamQuery_params q = {.hStream = NULL};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamQuery), CUPTI_API_EXIT, "cuStreamQuery", &q);
    assert_int_equal(nseen, 1);
}

static void driver_call_is_delivered_at_enter_and_exit(void **state)
{
    (void)state;
    cuMemsetD8Async_params p = {.dstDevice = 0x1000, .uc = 1, .N = 64};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_ENTER, "cuMemsetD8Async", &p);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].phase, DLS_PHASE_ENTER);
    fake_ok = CUDA_ERROR_INVALID_VALUE;
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_EXIT, "cuMemsetD8Async", &p);
    fake_ok = CUDA_SUCCESS;
    assert_int_equal(nseen, 2);
    assert_int_equal(seen[1].phase, DLS_PHASE_EXIT);
    assert_int_equal(seen[1].result, CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(seen[1].kind, DLS_OP_MEMSET);
    assert_string_equal(seen_api[1], "cuMemsetD8Async");
    assert_int_equal(seen_ranges[1].addr, 0x1000);
    assert_int_equal(seen_ranges[1].len, 64);
    assert_int_equal(seen[1].correlation_id, 77);
    assert_true(seen[1].tid > 0);
}

/* cudaMemcpy → cuMemcpyHtoD_v2: one operation, named after the runtime call. */
static void runtime_call_annotates_the_driver_call_beneath(void **state)
{
    (void)state;
    char host[8];
    cuMemcpyHtoD_v2_params p = {.dstDevice = 0x2000, .srcHost = host, .ByteCount = 8};
    CUpti_CallbackData rt = fake_cb(CUPTI_API_ENTER, "cudaMemcpy", host);
    rt.correlationId = 5;
    dls_cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, RCB(cudaMemcpy_v3020), &rt);
    assert_int_equal(nseen, 0);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemcpyHtoD_v2), CUPTI_API_ENTER, "cuMemcpyHtoD_v2", &p);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemcpyHtoD_v2), CUPTI_API_EXIT, "cuMemcpyHtoD_v2", &p);
    rt.callbackSite = CUPTI_API_EXIT;
    dls_cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, RCB(cudaMemcpy_v3020), &rt);
    assert_int_equal(nseen, 2);
    assert_string_equal(seen_api[0], "cudaMemcpy");
    assert_int_equal(seen[0].kind, DLS_OP_MEMCPY);
    /* After the runtime call returned, a direct driver call is named after itself. */
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemcpyHtoD_v2), CUPTI_API_ENTER, "cuMemcpyHtoD_v2", &p);
    assert_int_equal(nseen, 3);
    assert_string_equal(seen_api[2], "cuMemcpyHtoD_v2");
}

/* The shim's own driver calls report callbacks too; the guard hides them. */
static CUresult reporting_event_record(CUevent e, CUstream s)
{
    cuEventRecord_params p = {.hEvent = e, .hStream = s};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuEventRecord), CUPTI_API_ENTER, "cuEventRecord", &p);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuEventRecord), CUPTI_API_EXIT, "cuEventRecord", &p);
    return CUDA_SUCCESS;
}

/* Delivers the ENTER of a launch of kernel 0xf00 with one 8-byte parameter buffer. */
static void enter_a_launch(void)
{
    uint64_t buf[1] = {0};
    size_t size = 8;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    cuLaunchKernel_params lp = {.f = (CUfunction)0xf00, .extra = extra};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchKernel), CUPTI_API_ENTER, "cuLaunchKernel", &lp);
}

static void inject_at_enter(const dls_cuda_op *op)
{
    if (op->kind == DLS_OP_LAUNCH && op->phase == DLS_PHASE_ENTER)
        assert_int_equal(dls_drv_event_record((CUevent)0xe1, (CUstream)op->stream.handle), CUDA_SUCCESS);
}

static void shim_calls_are_not_reported(void **state)
{
    (void)state;
    fake_table.event_record = reporting_event_record;
    assert_int_equal(dls_drv_event_record((CUevent)0xe1, NULL), CUDA_SUCCESS);
    assert_int_equal(nseen, 0);
    assert_false(dls_drv_in_shim());
    /* Also when the policy injects from inside a delivery. */
    also = inject_at_enter;
    enter_a_launch();
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].kind, DLS_OP_LAUNCH);
    fake_table.event_record = NULL;
    /* Without a driver, guarded calls fail cleanly. */
    assert_int_equal(dls_drv_event_record((CUevent)0xe1, NULL), CUDA_ERROR_NOT_INITIALIZED);
}

static int ctx_asked, ctx_pushed;

static CUresult counting_ctx_get_current(CUcontext *ctx)
{
    ctx_asked++;
    *ctx = FAKE_CTX;
    return CUDA_SUCCESS;
}

static CUresult counting_ctx_push_current(CUcontext ctx)
{
    (void)ctx;
    ctx_pushed++;
    return CUDA_SUCCESS;
}

/* Enters the context of the launch's stream as the policy does before a record or wait: the
 * fake's own context, then another one, then the fake's again (after the push). */
static void enter_contexts(const dls_cuda_op *op)
{
    CUcontext other = (CUcontext)0x7100;
    int pushed = -1;
    if (op->kind != DLS_OP_LAUNCH || op->phase != DLS_PHASE_ENTER)
        return;
    assert_int_equal(dls_drv_ctx_enter(FAKE_CTX, &pushed), CUDA_SUCCESS);
    assert_int_equal(pushed, 0);
    assert_int_equal(ctx_asked, 0); /* the callback said FAKE_CTX is current */
    assert_int_equal(dls_drv_ctx_enter(other, &pushed), CUDA_SUCCESS);
    assert_int_equal(pushed, 1);
    assert_int_equal(ctx_asked, 0);
    dls_drv_ctx_leave(pushed);
    assert_int_equal(dls_drv_ctx_enter(FAKE_CTX, &pushed), CUDA_SUCCESS); /* after a push: asked */
    assert_int_equal(pushed, 0);
    assert_int_equal(ctx_asked, 1);
}

/* Inside a delivery the shim enters a stream's context without asking the driver which one is
 * current (the callback's data says it); after a push of its own, and outside a delivery, it
 * asks. */
static void a_delivery_knows_the_current_context(void **state)
{
    (void)state;
    fake_table.ctx_get_current = counting_ctx_get_current;
    fake_table.ctx_push_current = counting_ctx_push_current;
    ctx_asked = ctx_pushed = 0;
    also = enter_contexts;
    enter_a_launch();
    assert_int_equal(nseen, 1);
    assert_int_equal(ctx_pushed, 1);
    int pushed = -1;
    assert_int_equal(dls_drv_ctx_enter(FAKE_CTX, &pushed), CUDA_SUCCESS); /* no delivery now */
    assert_int_equal(ctx_asked, 2);
    fake_table.ctx_get_current = fake_ctx_get_current;
    fake_table.ctx_push_current = fake_ctx_push_current;
}

/* One creation and destruction of stream h (its ENTER and EXIT), in the calling thread's
 * context. */
static void create_and_destroy(CUstream h)
{
    cuStreamCreate_params cp = {.phStream = &h, .Flags = CU_STREAM_NON_BLOCKING};
    cuStreamDestroy_v2_params dp = {.hStream = h};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamCreate), CUPTI_API_ENTER, "cuStreamCreate", &cp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamCreate), CUPTI_API_EXIT, "cuStreamCreate", &cp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamDestroy_v2), CUPTI_API_ENTER, "cuStreamDestroy_v2", &dp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamDestroy_v2), CUPTI_API_EXIT, "cuStreamDestroy_v2", &dp);
}

/* Another thread may make a stream as this one is destroyed and get its handle before the
 * destruction's EXIT: from the destruction's ENTER on, no cached resolution of the handle names
 * the old stream. */
static void a_handle_made_again_during_its_destruction_resolves_anew(void **state)
{
    (void)state;
    CUstream h = (CUstream)0x6300;
    fake_streams[0] = (fake_stream){.h = h, .id = 63, .flags = CU_STREAM_NON_BLOCKING};
    dls_cuda_stream_latest *latest = &dls_cuda_thread_self()->latest;
    assert_int_equal(dls_cuda_stream_resolve_latest(latest, h, 0, FAKE_CTX)->id, 63);
    cuStreamDestroy_v2_params dp = {.hStream = h};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamDestroy_v2), CUPTI_API_ENTER, "cuStreamDestroy_v2", &dp);
    fake_streams[0].id = 64; /* made again by another thread, with the same handle */
    assert_int_equal(dls_cuda_stream_resolve_latest(latest, h, 0, FAKE_CTX)->id, 64);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamDestroy_v2), CUPTI_API_EXIT, "cuStreamDestroy_v2", &dp);
    assert_int_equal(seen[nseen - 1].stream.id, 63); /* the EXIT names the stream destroyed */
}

/* A creation, and the destruction of a stream nobody resolved, reach the lifetime lane's receiver
 * at their EXIT only, never the op lane's; the destruction of a stream that was used is an
 * operation at both phases; with DLSYNC_DEBUG_OPS on, every one is an operation (and printed). */
static void a_stream_no_model_holds_comes_and_goes_as_a_call(void **state)
{
    (void)state;
    CUstream unused = (CUstream)0x6100, used = (CUstream)0x6200;
    fake_streams[0] = (fake_stream){.h = unused, .id = 61, .flags = CU_STREAM_NON_BLOCKING};
    fake_streams[1] = (fake_stream){.h = used, .id = 62, .flags = CU_STREAM_NON_BLOCKING};
    create_and_destroy(unused);
    assert_int_equal(nseen, 0);
    assert_int_equal(ncalls, 2);
    assert_int_equal(ncalls_nested, 0);
    assert_int_equal(fake_get_id_calls, 0);

    cuStreamCreate_params cp = {.phStream = &used, .Flags = CU_STREAM_NON_BLOCKING};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamCreate), CUPTI_API_EXIT, "cuStreamCreate", &cp);
    cuStreamSynchronize_params ss = {.hStream = used};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamSynchronize), CUPTI_API_EXIT, "cuStreamSynchronize", &ss);
    assert_int_equal(nseen, 1);
    cuStreamDestroy_v2_params dp = {.hStream = used};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamDestroy_v2), CUPTI_API_ENTER, "cuStreamDestroy_v2", &dp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamDestroy_v2), CUPTI_API_EXIT, "cuStreamDestroy_v2", &dp);
    assert_int_equal(ncalls, 3);
    assert_int_equal(nseen, 3);
    for (int k = 1; k < 3; k++) {
        assert_int_equal(seen[k].kind, DLS_OP_STREAM_DESTROY);
        assert_int_equal(seen[k].phase, k == 1 ? DLS_PHASE_ENTER : DLS_PHASE_EXIT);
        assert_true(seen[k].stream.resolved);
        assert_int_equal(seen[k].stream.id, 62);
    }

    /* Inside another call, the call is nested. */
    cuStreamQuery_params q = {.hStream = NULL};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamQuery), CUPTI_API_ENTER, "cuStreamQuery", &q);
    create_and_destroy(unused);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamQuery), CUPTI_API_EXIT, "cuStreamQuery", &q);
    assert_int_equal(ncalls, 5);
    assert_int_equal(ncalls_nested, 2);

    nseen = ncalls = 0;
    dls_cuda_callback_set_debug(1);
    create_and_destroy(unused);
    assert_int_equal(ncalls, 0);
    assert_int_equal(nseen, 3);
    assert_int_equal(seen[0].kind, DLS_OP_STREAM_CREATE);
    assert_int_equal(seen[0].phase, DLS_PHASE_EXIT);
    assert_int_equal(seen[2].kind, DLS_OP_STREAM_DESTROY);
    assert_false(seen[2].stream.resolved);
}

static void destroyed_handles_get_new_ids_when_reused(void **state)
{
    (void)state;
    CUevent e = (CUevent)0xe200;
    cuEventQuery_params q = {.hEvent = e};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuEventQuery), CUPTI_API_EXIT, "cuEventQuery", &q);
    uint64_t first = seen[0].event_id;
    cuEventDestroy_v2_params d = {.hEvent = e};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuEventDestroy_v2), CUPTI_API_ENTER, "cuEventDestroy_v2", &d);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuEventDestroy_v2), CUPTI_API_EXIT, "cuEventDestroy_v2", &d);
    assert_int_equal(seen[2].event_id, first);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuEventQuery), CUPTI_API_EXIT, "cuEventQuery", &q);
    assert_true(seen[3].event_id != first);

    CUstream s = (CUstream)0x5800;
    fake_streams[0] = (fake_stream){.h = s, .id = 58};
    cuStreamSynchronize_params ss = {.hStream = s};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamSynchronize), CUPTI_API_EXIT, "cuStreamSynchronize", &ss);
    assert_int_equal(seen[4].stream.id, 58);
    cuStreamDestroy_v2_params sd = {.hStream = s};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamDestroy_v2), CUPTI_API_ENTER, "cuStreamDestroy_v2", &sd);
    fake_streams[0].id = 59; /* the driver reuses the handle for a new stream */
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamDestroy_v2), CUPTI_API_EXIT, "cuStreamDestroy_v2", &sd);
    assert_int_equal(seen[6].stream.id, 58);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamSynchronize), CUPTI_API_EXIT, "cuStreamSynchronize", &ss);
    assert_int_equal(seen[7].stream.id, 59);
}

static void unhandled_calls_and_other_domains_deliver_nothing(void **state)
{
    (void)state;
    char params[64] = {0};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemAlloc_v2), CUPTI_API_ENTER, "cuMemAlloc_v2", params);
    call(CUPTI_CB_DOMAIN_RESOURCE, 1, CUPTI_API_ENTER, "x", params);
    dls_cuda_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchKernel), NULL);
    assert_int_equal(nseen, 0);
    dls_cuda_set_receivers(NULL);
    cuStreamQuery_params p = {.hStream = NULL};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamQuery), CUPTI_API_ENTER, "cuStreamQuery", &p);
    assert_int_equal(nseen, 0);
}

static void formatting_names_every_part(void **state)
{
    (void)state;
    dls_cuda_op op = {.kind = DLS_OP_LAUNCH,
                      .phase = DLS_PHASE_EXIT,
                      .api = "cudaLaunchKernel",
                      .name = "scale",
                      .flags = DLS_OPF_HAS_STREAM | DLS_OPF_CONSERVATIVE,
                      .nwords = 3,
                      .stream = {.id = 7, .kind = DLS_STREAM_NON_BLOCKING}};
    char buf[256];
    size_t n = dls_cuda_op_format(&op, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    assert_string_equal(buf, "op exit launch api=cudaLaunchKernel stream=7/non-blocking event=0 ranges=0 "
                             "words=3 conservative=1 result=0 name=scale");
    dls_cuda_work w = {.kind = DLS_OP_LAUNCH,
                       .phase = DLS_PHASE_EXIT,
                       .api = "cudaLaunchKernel",
                       .name = "scale",
                       .flags = DLS_OPF_CONSERVATIVE,
                       .nwords = 3,
                       .stream = &op.stream};
    char line[256];
    assert_int_equal(dls_cuda_work_format(&w, line, sizeof line), n); /* a work: the line of its op */
    assert_string_equal(line, buf);
    char tiny[8];
    assert_int_equal(dls_cuda_op_format(&op, tiny, sizeof tiny), 7);
    assert_string_equal(tiny, "op exit");
    for (int k = 0; k < DLS_OP_KIND_COUNT; k++)
        assert_string_not_equal(dls_cuda_op_kind_name((dls_op_kind)k), "unknown");
    assert_string_equal(dls_cuda_stream_kind_name(DLS_STREAM_PER_THREAD), "per-thread");
}

static atomic_int mt_delivered;

static void counting_on_op(const dls_cuda_op *op)
{
    (void)op;
    atomic_fetch_add(&mt_delivered, 1);
}

static void counting_on_op_too(const dls_cuda_op *op)
{
    counting_on_op(op);
}

/* Each thread creates, uses and destroys its own events and queries the shared stream. */
static void *mt_worker(void *arg)
{
    uintptr_t base = (uintptr_t)arg;
    for (int i = 0; i < 200; i++) {
        CUevent e = (CUevent)(base + (uintptr_t)(i % 4) * 16);
        cuEventCreate_params cp = {.phEvent = &e};
        call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuEventCreate), CUPTI_API_EXIT, "cuEventCreate", &cp);
        cuStreamQuery_params q = {.hStream = (CUstream)0x5900};
        call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuStreamQuery), CUPTI_API_EXIT, "cuStreamQuery", &q);
        cuEventDestroy_v2_params d = {.hEvent = e};
        call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuEventDestroy_v2), CUPTI_API_EXIT, "cuEventDestroy_v2", &d);
        if (i % 50 == 0)
            dls_cuda_streams_invalidate();
    }
    return NULL;
}

static void threads_observe_concurrently(void **state)
{
    (void)state;
    fake_streams[0] = (fake_stream){.h = (CUstream)0x5900, .id = 59};
    atomic_store(&mt_delivered, 0);
    static const dls_cuda_receivers counting = {.op = counting_on_op, .work = on_work, .lifetime = on_lifetime};
    static const dls_cuda_receivers counting_too = {.op = counting_on_op_too, .work = on_work, .lifetime = on_lifetime};
    dls_cuda_set_receivers(&counting);
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, mt_worker, (void *)(0x100000 * (i + 1))), 0);
    dls_cuda_set_receivers(&counting_too); /* replaced while threads deliver */
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&mt_delivered), 4 * 200 * 3);
}

/* A launch is decoded at ENTER; its EXIT delivers the same words, also when another call was
 * decoded on the thread in between (a work, or an op whose words took the scratch area: its EXIT
 * then decodes the launch again). */
static void launch_exit_carries_the_enter_decode(void **state)
{
    (void)state;
    uint64_t buf[2] = {0x5000, 0x6000};
    size_t size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    cuLaunchKernel_params lp = {.f = (CUfunction)0xf00, .extra = extra};
    cuMemsetD8Async_params mp = {.dstDevice = 0x1000, .uc = 1, .N = 64};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchKernel), CUPTI_API_ENTER, "cuLaunchKernel", &lp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchKernel), CUPTI_API_EXIT, "cuLaunchKernel", &lp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchKernel), CUPTI_API_ENTER, "cuLaunchKernel", &lp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemsetD8Async), CUPTI_API_ENTER, "cuMemsetD8Async", &mp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchKernel), CUPTI_API_EXIT, "cuLaunchKernel", &lp);
    assert_int_equal(nseen, 5);
    static const int launches[] = {0, 1, 2, 4};
    for (int i = 0; i < 4; i++) {
        const dls_cuda_op *op = &seen[launches[i]];
        assert_int_equal(op->kind, DLS_OP_LAUNCH);
        assert_int_equal(op->phase, i % 2 ? DLS_PHASE_EXIT : DLS_PHASE_ENTER);
        assert_false(op->flags & DLS_OPF_CONSERVATIVE);
        assert_int_equal(op->nwords, 2);
    }
    assert_int_equal(seen[3].kind, DLS_OP_MEMSET);
    /* Kernel arguments (not an extra buffer) are copied into the scratch area. */
    uint64_t a = 0x5000, b = 0x6000, word = 0x7000;
    void *outer_args[] = {&a, &b}, *args[] = {&word};
    fake_kernels[0] = (fake_kernel){.f = (CUfunction)0xf60, .n = 1, .off = {0}, .size = {8}};
    fake_kernels[1] = (fake_kernel){.f = (CUfunction)0xf10, .n = 2, .off = {0, 8}, .size = {8, 8}};
    cuLaunchKernel_params outer = {.f = (CUfunction)0xf10, .kernelParams = outer_args};
    CUDA_LAUNCH_PARAMS l[1] = {{.function = (CUfunction)0xf60, .kernelParams = args}};
    cuLaunchCooperativeKernelMultiDevice_params mdp = {.launchParamsList = l, .numDevices = 1};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchKernel), CUPTI_API_ENTER, "cuLaunchKernel", &outer);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchCooperativeKernelMultiDevice), CUPTI_API_ENTER,
         "cuLaunchCooperativeKernelMultiDevice", &mdp);
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuLaunchKernel), CUPTI_API_EXIT, "cuLaunchKernel", &outer);
    assert_int_equal(nseen, 8);
    assert_int_equal(seen[6].nwords, 1); /* the multi-device launch's word, in the scratch area */
    assert_int_equal(seen[7].phase, DLS_PHASE_EXIT);
    assert_int_equal(seen[7].nwords, 2);
    assert_int_equal(seen[7].words[0], 0x5000); /* decoded again, not the scratch area's last words */
    assert_int_equal(seen[7].words[1], 0x6000);
}

/* A free the observer decodes and an unmap no decoder reads both make the allocation ranges kept
 * stale at their ENTER: the next question about the memory they gave back goes to the driver,
 * which may have handed it out again with another start. */
static void calls_that_free_or_unmap_age_the_ranges(void **state)
{
    (void)state;
    fake_allocs[0] = (fake_alloc){.base = 0x200000, .size = 0x1000};
    dls_cuda_ranges_watch(1);
    assert_int_equal(dls_cuda_range_start(0x200800), 0x200000);
    fake_allocs[0] = (fake_alloc){.base = 0x200800, .size = 0x800}; /* behind a call not yet seen */
    assert_int_equal(dls_cuda_range_start(0x200800), 0x200000);     /* kept */
    cuMemFree_v2_params f = {.dptr = 0x200000};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemFree_v2), CUPTI_API_ENTER, "cuMemFree_v2", &f);
    assert_int_equal(dls_cuda_range_start(0x200800), 0x200800);
    fake_allocs[0] = (fake_alloc){.base = 0x200400, .size = 0xc00};
    cuMemUnmap_params u = {.ptr = 0x200000, .size = 0x1000};
    call(CUPTI_CB_DOMAIN_DRIVER_API, DCB(cuMemUnmap), CUPTI_API_ENTER, "cuMemUnmap", &u);
    assert_int_equal(dls_cuda_range_start(0x200800), 0x200400);
    dls_cuda_ranges_watch(0);
    memset(&fake_allocs[0], 0, sizeof fake_allocs[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(driver_call_is_delivered_at_enter_and_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(the_enter_gate_holds_back_only_stream_work, setup, teardown),
        cmocka_unit_test_setup_teardown(a_call_inside_another_is_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(each_call_takes_one_way, setup, teardown),
        cmocka_unit_test_setup_teardown(the_lane_calls_never_reach_the_op_receiver, setup, teardown),
        cmocka_unit_test_setup_teardown(runtime_call_annotates_the_driver_call_beneath, setup, teardown),
        cmocka_unit_test_setup_teardown(shim_calls_are_not_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(a_delivery_knows_the_current_context, setup, teardown),
        cmocka_unit_test_setup_teardown(launch_exit_carries_the_enter_decode, setup, teardown),
        cmocka_unit_test_setup_teardown(destroyed_handles_get_new_ids_when_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_stream_no_model_holds_comes_and_goes_as_a_call, setup, teardown),
        cmocka_unit_test_setup_teardown(a_handle_made_again_during_its_destruction_resolves_anew, setup, teardown),
        cmocka_unit_test_setup_teardown(unhandled_calls_and_other_domains_deliver_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(formatting_names_every_part, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_observe_concurrently, setup, teardown),
        cmocka_unit_test_setup_teardown(calls_that_free_or_unmap_age_the_ranges, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
