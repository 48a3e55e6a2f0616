/* Unit tests of shim/cuda decoding: every operation kind decoded from fabricated CUPTI callback
 * data with the real parameter structs, stream identity and kinds, argument words, ranges. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_cuda_fake.h"

#include "cuda/cbids.h"
#include "cuda/decode.h"
#include "cuda/decode_common.h"
#include "cuda/decode_launch.h"
#include "cuda/decode_life.h"
#include "cuda/decode_mem.h"
#include "cuda/decode_sync.h"
#include "cuda/decode_work.h"
#include "cuda/kparams.h"
#include "cuda/identity.h"

#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

static dls_cuda_scratch scratch;

static int setup(void **state)
{
    (void)state;
    fake_reset();
    dls_cuda_contexts_invalidate();
    dls_cuda_kparams_invalidate();
    return 0;
}

static dls_cuda_work work;

/* Decodes the single operation of a call at `site` as the observer does: a call of the work lane
 * into a work, whose stream the lane resolves, any other into an op. Returns it as an op either
 * way (a work with its stream, its flags with DLS_OPF_HAS_STREAM, its ranges in `work`). Fails
 * the test when there is none, or when both decoders read the call. */
static dls_cuda_op decode1(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, const char *fn, const void *params)
{
    CUpti_CallbackData cb = fake_cb(site, fn, params);
    dls_cuda_op op;
    int as_op = dls_cuda_decode(cbid, &cb, 0, &op, &scratch);
    int as_work = dls_cuda_decode_work(cbid, &cb, &work, scratch.words, DLS_SCRATCH_WORDS);
    assert_int_equal(as_op + as_work, 1);
    dls_cuda_op none;
    assert_int_equal(dls_cuda_decode(cbid, &cb, 1, &none, &scratch), 0);
    if (as_work) {
        op = (dls_cuda_op){.kind = work.kind,
                           .flags = work.flags | DLS_OPF_HAS_STREAM,
                           .ranges = work.ranges,
                           .nranges = work.nranges,
                           .words = work.words,
                           .nwords = work.nwords};
        dls_cuda_stream_resolve((CUstream)work.handle, work.per_thread, cb.context, &op.stream);
    }
    return op;
}

static void assert_range(const dls_cuda_op *op, uint32_t i, uintptr_t addr, size_t len, unsigned access)
{
    assert_true(i < op->nranges);
    assert_int_equal(op->ranges[i].addr, addr);
    assert_int_equal(op->ranges[i].len, len);
    assert_int_equal(op->ranges[i].access, access);
}

struct two_ptrs {
    void *a, *b;
};

/* f(float *p, int n, struct two_ptrs s) with the driver's layout: offsets 0, 8, 16. */
static void add_kernel(CUfunction f, int as_kernel)
{
    fake_kernels[0] = (fake_kernel){.f = f, .n = 3, .off = {0, 8, 16}, .size = {8, 4, 16}, .as_kernel = as_kernel};
}

static void launch_words_follow_the_parameter_layout(void **state)
{
    (void)state;
    CUfunction f = (CUfunction)0xf00;
    add_kernel(f, 0);
    void *p = (void *)0x1000;
    int n = 5;
    struct two_ptrs s = {(void *)0x2000, (void *)0x3000};
    void *args[] = {&p, &n, &s};
    cuLaunchKernel_params lp = {.f = f, .hStream = NULL, .kernelParams = args};
    dls_cuda_op op = decode1(CBID(cuLaunchKernel), CUPTI_API_ENTER, "cuLaunchKernel", &lp);
    assert_int_equal(op.kind, DLS_OP_LAUNCH);
    assert_false(op.flags & DLS_OPF_CONSERVATIVE);
    assert_false(op.flags & DLS_OPF_CONSERVATIVE);
    assert_true(op.flags & DLS_OPF_ASYNC);
    assert_int_equal(op.nwords, 3); /* the int leaves no aligned 8-byte word */
    assert_int_equal(op.words[0], 0x1000);
    assert_int_equal(op.words[1], 0x2000);
    assert_int_equal(op.words[2], 0x3000);
    assert_int_equal(op.stream.kind, DLS_STREAM_LEGACY);
    assert_int_equal(op.stream.id, FAKE_LEGACY_ID);
    assert_true(op.stream.resolved);
}

static void layout_is_asked_once_per_function(void **state)
{
    (void)state;
    CUfunction f = (CUfunction)0xf10;
    add_kernel(f, 0);
    void *p = NULL;
    int n = 0;
    struct two_ptrs s = {0};
    void *args[] = {&p, &n, &s};
    cuLaunchKernel_params lp = {.f = f, .kernelParams = args};
    decode1(CBID(cuLaunchKernel), CUPTI_API_ENTER, "cuLaunchKernel", &lp);
    int asked = fake_param_info_calls;
    assert_true(asked > 0);
    decode1(CBID(cuLaunchKernel), CUPTI_API_EXIT, "cuLaunchKernel", &lp);
    assert_int_equal(fake_param_info_calls, asked);
    dls_cuda_kparams_invalidate(); /* a module unload */
    decode1(CBID(cuLaunchKernel), CUPTI_API_ENTER, "cuLaunchKernel", &lp);
    assert_true(fake_param_info_calls > asked);
}

static void a_cukernel_handle_uses_kernel_param_info(void **state)
{
    (void)state;
    CUfunction f = (CUfunction)0xf20;
    add_kernel(f, 1);
    void *p = (void *)0xabc0;
    int n = 1;
    struct two_ptrs s = {0};
    void *args[] = {&p, &n, &s};
    cuLaunchKernel_ptsz_params lp = {.f = f, .kernelParams = args};
    dls_cuda_op op = decode1(CBID(cuLaunchKernel_ptsz), CUPTI_API_ENTER, "cuLaunchKernel_ptsz", &lp);
    assert_false(op.flags & DLS_OPF_CONSERVATIVE);
    assert_int_equal(op.words[0], 0xabc0);
    /* NULL in a _ptsz call is the per-thread default stream. */
    assert_int_equal(op.stream.kind, DLS_STREAM_PER_THREAD);
    assert_int_equal(op.stream.id, FAKE_PER_THREAD_ID);
}

static void extra_buffer_is_scanned_whole(void **state)
{
    (void)state;
    uint64_t buf[3] = {0x10, 0x20, 0x30};
    size_t size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    cuLaunchKernel_params lp = {.f = (CUfunction)0xf30, .extra = extra};
    dls_cuda_op op = decode1(CBID(cuLaunchKernel), CUPTI_API_ENTER, "cuLaunchKernel", &lp);
    assert_false(op.flags & DLS_OPF_CONSERVATIVE);
    assert_int_equal(op.nwords, 3);
    assert_int_equal(op.words[2], 0x30);
    assert_int_equal(fake_param_info_calls, 0);
}

static void unknown_layout_is_conservative(void **state)
{
    (void)state;
    void *p = NULL;
    void *args[] = {&p};
    cuLaunchCooperativeKernel_params lp = {.f = (CUfunction)0xf40, .kernelParams = args};
    dls_cuda_op op = decode1(CBID(cuLaunchCooperativeKernel), CUPTI_API_ENTER, "cuLaunchCooperativeKernel", &lp);
    assert_int_equal(op.kind, DLS_OP_LAUNCH);
    assert_true(op.flags & DLS_OPF_CONSERVATIVE);
}

static void launch_ex_takes_the_stream_from_its_config(void **state)
{
    (void)state;
    fake_streams[0] = (fake_stream){.h = (CUstream)0x5000, .id = 42, .flags = CU_STREAM_NON_BLOCKING};
    CUlaunchConfig cfg = {.hStream = (CUstream)0x5000};
    uint64_t buf[1] = {0x99};
    size_t size = 8;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    cuLaunchKernelEx_params lp = {.config = &cfg, .f = (CUfunction)0xf50, .extra = extra};
    dls_cuda_op op = decode1(CBID(cuLaunchKernelEx), CUPTI_API_ENTER, "cuLaunchKernelEx", &lp);
    assert_int_equal(op.stream.id, 42);
    assert_int_equal(op.stream.kind, DLS_STREAM_NON_BLOCKING);
    assert_int_equal(op.stream.handle, 0x5000);
    assert_int_equal(op.stream.ctx, (uintptr_t)FAKE_CTX);
    assert_int_equal(op.stream.ctx_id, (uintptr_t)FAKE_CTX >> 8);
}

static void multi_device_launch_is_one_op_per_device(void **state)
{
    (void)state;
    fake_streams[0] = (fake_stream){.h = (CUstream)0x5100, .id = 51};
    fake_streams[1] = (fake_stream){.h = (CUstream)0x5200, .id = 52};
    CUDA_LAUNCH_PARAMS l[2] = {{.function = (CUfunction)0xf60, .hStream = (CUstream)0x5100},
                               {.function = (CUfunction)0xf60, .hStream = (CUstream)0x5200}};
    cuLaunchCooperativeKernelMultiDevice_params lp = {.launchParamsList = l, .numDevices = 2};
    CUpti_CallbackData cb = fake_cb(CUPTI_API_ENTER, "cuLaunchCooperativeKernelMultiDevice", &lp);
    dls_cuda_op op;
    assert_int_equal(dls_cuda_decode(CBID(cuLaunchCooperativeKernelMultiDevice), &cb, 0, &op, &scratch), 1);
    assert_int_equal(op.stream.id, 51);
    assert_int_equal(dls_cuda_decode(CBID(cuLaunchCooperativeKernelMultiDevice), &cb, 1, &op, &scratch), 1);
    assert_int_equal(op.stream.id, 52);
    assert_int_equal(dls_cuda_decode(CBID(cuLaunchCooperativeKernelMultiDevice), &cb, 2, &op, &scratch), 0);
}

static void sync_copy_runs_on_the_default_stream(void **state)
{
    (void)state;
    char host[64];
    cuMemcpyHtoD_v2_params p = {.dstDevice = 0x9000, .srcHost = host, .ByteCount = 64};
    dls_cuda_op op = decode1(CBID(cuMemcpyHtoD_v2), CUPTI_API_ENTER, "cuMemcpyHtoD_v2", &p);
    assert_int_equal(op.kind, DLS_OP_MEMCPY);
    assert_false(op.flags & DLS_OPF_ASYNC);
    assert_int_equal(op.stream.kind, DLS_STREAM_LEGACY);
    assert_int_equal(op.nranges, 2);
    assert_range(&op, 0, (uintptr_t)host, 64, DLS_ACCESS_READ);
    assert_range(&op, 1, 0x9000, 64, DLS_ACCESS_WRITE);
    cuMemcpyHtoD_v2_ptds_params q = {.dstDevice = 0x9000, .srcHost = host, .ByteCount = 8};
    op = decode1(CBID(cuMemcpyHtoD_v2_ptds), CUPTI_API_ENTER, "cuMemcpyHtoD_v2_ptds", &q);
    assert_int_equal(op.stream.kind, DLS_STREAM_PER_THREAD);
}

static void async_copy_is_on_its_stream(void **state)
{
    (void)state;
    fake_streams[0] = (fake_stream){.h = (CUstream)0x5300, .id = 53};
    char host[16];
    cuMemcpyDtoHAsync_v2_params p = {
        .dstHost = host, .srcDevice = 0xa000, .ByteCount = 16, .hStream = (CUstream)0x5300};
    dls_cuda_op op = decode1(CBID(cuMemcpyDtoHAsync_v2), CUPTI_API_ENTER, "cuMemcpyDtoHAsync_v2", &p);
    assert_true(op.flags & DLS_OPF_ASYNC);
    assert_int_equal(op.stream.id, 53);
    assert_int_equal(op.stream.kind, DLS_STREAM_BLOCKING);
    assert_range(&op, 0, 0xa000, 16, DLS_ACCESS_READ);
    assert_range(&op, 1, (uintptr_t)host, 16, DLS_ACCESS_WRITE);
    /* The stream handle 0x1 is the legacy stream whatever the call. */
    cuMemcpyAsync_ptsz_params q = {.dst = 0xb000, .src = 0xc000, .ByteCount = 4, .hStream = CU_STREAM_LEGACY};
    op = decode1(CBID(cuMemcpyAsync_ptsz), CUPTI_API_ENTER, "cuMemcpyAsync_ptsz", &q);
    assert_int_equal(op.stream.kind, DLS_STREAM_LEGACY);
}

static void array_side_has_no_range(void **state)
{
    (void)state;
    cuMemcpyDtoA_v2_params p = {.dstArray = (CUarray)0x1, .dstOffset = 0, .srcDevice = 0xd000, .ByteCount = 32};
    dls_cuda_op op = decode1(CBID(cuMemcpyDtoA_v2), CUPTI_API_ENTER, "cuMemcpyDtoA_v2", &p);
    assert_int_equal(op.nranges, 1);
    assert_range(&op, 0, 0xd000, 32, DLS_ACCESS_READ);
}

static void copies_2d_and_3d_give_bounding_ranges(void **state)
{
    (void)state;
    CUDA_MEMCPY2D c = {.srcXInBytes = 4,
                       .srcY = 1,
                       .srcMemoryType = CU_MEMORYTYPE_DEVICE,
                       .srcDevice = 0x10000,
                       .srcPitch = 256,
                       .dstMemoryType = CU_MEMORYTYPE_HOST,
                       .dstHost = (void *)0x20000,
                       .dstPitch = 128,
                       .WidthInBytes = 100,
                       .Height = 3};
    cuMemcpy2DAsync_v2_params p = {.pCopy = &c, .hStream = NULL};
    dls_cuda_op op = decode1(CBID(cuMemcpy2DAsync_v2), CUPTI_API_ENTER, "cuMemcpy2DAsync_v2", &p);
    assert_range(&op, 0, 0x10000 + 256 + 4, 2 * 256 + 100, DLS_ACCESS_READ);
    assert_range(&op, 1, 0x20000, 2 * 128 + 100, DLS_ACCESS_WRITE);

    CUDA_MEMCPY3D d = {.srcMemoryType = CU_MEMORYTYPE_UNIFIED,
                       .srcDevice = 0x40000,
                       .srcPitch = 64,
                       .srcHeight = 4,
                       .srcZ = 1,
                       .dstMemoryType = CU_MEMORYTYPE_ARRAY,
                       .WidthInBytes = 10,
                       .Height = 2,
                       .Depth = 3};
    cuMemcpy3D_v2_params q = {.pCopy = &d};
    op = decode1(CBID(cuMemcpy3D_v2), CUPTI_API_ENTER, "cuMemcpy3D_v2", &q);
    assert_int_equal(op.nranges, 1);
    assert_range(&op, 0, 0x40000 + 4 * 64, (2 * 4 + 1) * 64 + 10, DLS_ACCESS_READ);
}

static void sets_cover_their_elements(void **state)
{
    (void)state;
    cuMemsetD32_v2_params p = {.dstDevice = 0x50000, .ui = 7, .N = 10};
    dls_cuda_op op = decode1(CBID(cuMemsetD32_v2), CUPTI_API_ENTER, "cuMemsetD32_v2", &p);
    assert_int_equal(op.kind, DLS_OP_MEMSET);
    assert_int_equal(op.nranges, 1);
    assert_range(&op, 0, 0x50000, 40, DLS_ACCESS_WRITE);
    cuMemsetD2D16Async_ptsz_params q = {.dstDevice = 0x60000, .dstPitch = 64, .Width = 10, .Height = 3};
    op = decode1(CBID(cuMemsetD2D16Async_ptsz), CUPTI_API_ENTER, "cuMemsetD2D16Async_ptsz", &q);
    assert_true(op.flags & DLS_OPF_ASYNC);
    assert_int_equal(op.stream.kind, DLS_STREAM_PER_THREAD);
    assert_range(&op, 0, 0x60000, 2 * 64 + 20, DLS_ACCESS_WRITE);
}

static void batches_list_every_copy_and_3d_batches_are_conservative(void **state)
{
    (void)state;
    CUdeviceptr dsts[2] = {0x100, 0x300}, srcs[2] = {0x200, 0x400};
    size_t sizes[2] = {8, 16};
    cuMemcpyBatchAsync_v2_params p = {.dsts = dsts, .srcs = srcs, .sizes = sizes, .count = 2};
    dls_cuda_op op = decode1(CBID(cuMemcpyBatchAsync_v2), CUPTI_API_ENTER, "cuMemcpyBatchAsync_v2", &p);
    assert_int_equal(op.nranges, 4);
    assert_range(&op, 2, 0x400, 16, DLS_ACCESS_READ);
    assert_range(&op, 3, 0x300, 16, DLS_ACCESS_WRITE);
    assert_false(op.flags & DLS_OPF_CONSERVATIVE);
    cuMemcpy3DBatchAsync_v2_params q = {.numOps = 1};
    op = decode1(CBID(cuMemcpy3DBatchAsync_v2), CUPTI_API_ENTER, "cuMemcpy3DBatchAsync_v2", &q);
    assert_true(op.flags & DLS_OPF_CONSERVATIVE);
}

/* A thread with no scratch area (no memory for one): an operation with ranges or words is
 * conservative, one with none is decoded as ever. */
static void without_scratch_an_operation_with_ranges_or_words_is_conservative(void **state)
{
    (void)state;
    CUdeviceptr dsts[1] = {0x100}, srcs[1] = {0x200};
    size_t sizes[1] = {8};
    cuMemcpyBatchAsync_v2_params bp = {.dsts = dsts, .srcs = srcs, .sizes = sizes, .count = 1};
    CUpti_CallbackData cb = fake_cb(CUPTI_API_ENTER, "cuMemcpyBatchAsync_v2", &bp);
    dls_cuda_op op;
    assert_int_equal(dls_cuda_decode(CBID(cuMemcpyBatchAsync_v2), &cb, 0, &op, NULL), 1);
    assert_int_equal(op.nranges, 0);
    assert_true(op.flags & DLS_OPF_CONSERVATIVE);
    uint64_t buf[1] = {0x10};
    size_t size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    cuLaunchKernel_params lp = {.f = (CUfunction)0xf30, .extra = extra};
    cb = fake_cb(CUPTI_API_ENTER, "cuLaunchKernel", &lp);
    dls_cuda_work w;
    assert_int_equal(dls_cuda_decode_work(CBID(cuLaunchKernel), &cb, &w, NULL, 0), 1);
    assert_true(w.flags & DLS_OPF_CONSERVATIVE);
    assert_int_equal(w.nwords, 0);
    cuStreamSynchronize_params sp = {.hStream = NULL};
    cb = fake_cb(CUPTI_API_ENTER, "cuStreamSynchronize", &sp);
    assert_int_equal(dls_cuda_decode(CBID(cuStreamSynchronize), &cb, 0, &op, NULL), 1);
    assert_int_equal(op.kind, DLS_OP_STREAM_SYNC);
    assert_false(op.flags & DLS_OPF_CONSERVATIVE);
}

/* A free names the whole allocation and its context (what a synchronous free waits for) at both
 * phases, though the driver no longer knows it at EXIT. */
static void free_reports_the_whole_allocation_at_both_phases(void **state)
{
    (void)state;
    fake_allocs[0] = (fake_alloc){.base = 0x70000, .size = 4096, .ctx = (CUcontext)0xc7};
    cuMemFree_v2_params p = {.dptr = 0x70000};
    dls_cuda_op op = decode1(CBID(cuMemFree_v2), CUPTI_API_ENTER, "cuMemFree_v2", &p);
    assert_int_equal(op.kind, DLS_OP_FREE);
    assert_range(&op, 0, 0x70000, 4096, DLS_ACCESS_WRITE);
    assert_int_equal(op.ctx, 0xc7);
    fake_allocs[0].size = 0; /* freed: the driver no longer knows it */
    op = decode1(CBID(cuMemFree_v2), CUPTI_API_EXIT, "cuMemFree_v2", &p);
    assert_range(&op, 0, 0x70000, 4096, DLS_ACCESS_WRITE);
    assert_int_equal(op.ctx, 0xc7);
    cuMemFreeAsync_params q = {.dptr = 0x80000, .hStream = NULL};
    op = decode1(CBID(cuMemFreeAsync), CUPTI_API_ENTER, "cuMemFreeAsync", &q);
    assert_true(op.flags & DLS_OPF_CONSERVATIVE); /* unknown allocation */
    assert_true(op.flags & DLS_OPF_HAS_STREAM);
    assert_int_equal(op.ctx, 0); /* and unknown context */
}

static void events_keep_ids_until_destroyed(void **state)
{
    (void)state;
    CUevent e = (CUevent)0xe100;
    cuEventCreate_params cp = {.phEvent = &e, .Flags = CU_EVENT_DISABLE_TIMING};
    dls_cuda_op op = decode1(CBID(cuEventCreate), CUPTI_API_ENTER, "cuEventCreate", &cp);
    assert_false(op.flags & DLS_OPF_HAS_EVENT);
    op = decode1(CBID(cuEventCreate), CUPTI_API_EXIT, "cuEventCreate", &cp);
    assert_int_equal(op.kind, DLS_OP_EVENT_CREATE);
    uint64_t id = op.event_id;
    assert_true(id > 0);
    cuEventRecord_params rp = {.hEvent = e, .hStream = NULL};
    op = decode1(CBID(cuEventRecord), CUPTI_API_ENTER, "cuEventRecord", &rp);
    assert_int_equal(op.kind, DLS_OP_EVENT_RECORD);
    assert_int_equal(op.event_id, id);
    assert_int_equal(op.stream.kind, DLS_STREAM_LEGACY);
    cuStreamWaitEvent_params wp = {.hStream = CU_STREAM_PER_THREAD, .hEvent = e};
    op = decode1(CBID(cuStreamWaitEvent), CUPTI_API_ENTER, "cuStreamWaitEvent", &wp);
    assert_int_equal(op.kind, DLS_OP_STREAM_WAIT_EVENT);
    assert_int_equal(op.event_id, id);
    assert_int_equal(op.stream.kind, DLS_STREAM_PER_THREAD);
    cuEventSynchronize_params sp = {.hEvent = e};
    op = decode1(CBID(cuEventSynchronize), CUPTI_API_ENTER, "cuEventSynchronize", &sp);
    assert_int_equal(op.kind, DLS_OP_EVENT_SYNC);
    assert_int_equal(op.event_id, id);
    dls_cuda_event_forget(e, id);
    op = decode1(CBID(cuEventCreate), CUPTI_API_EXIT, "cuEventCreate", &cp);
    assert_true(op.event_id > id);
}

/* Thread A destroys event E; the driver hands E's handle to thread B's new event before A's EXIT
 * is seen. A's destroy names E's old id, and forgetting it leaves B's event its own id. */
static void a_handle_reused_before_the_destroys_exit_keeps_the_new_events_id(void **state)
{
    (void)state;
    CUevent e = (CUevent)0xe200;
    cuEventCreate_params cp = {.phEvent = &e, .Flags = 0};
    uint64_t old = decode1(CBID(cuEventCreate), CUPTI_API_EXIT, "cuEventCreate", &cp).event_id;
    cuEventDestroy_v2_params dp = {.hEvent = e};
    dls_cuda_op enter = decode1(CBID(cuEventDestroy_v2), CUPTI_API_ENTER, "cuEventDestroy_v2", &dp);
    assert_int_equal(enter.kind, DLS_OP_EVENT_DESTROY);
    assert_int_equal(enter.event_id, old);
    uint64_t fresh = decode1(CBID(cuEventCreate), CUPTI_API_EXIT, "cuEventCreate", &cp).event_id; /* thread B */
    assert_true(fresh > old);
    dls_cuda_op exit_ = decode1(CBID(cuEventDestroy_v2), CUPTI_API_EXIT, "cuEventDestroy_v2", &dp);
    assert_int_equal(exit_.event_id, old);
    dls_cuda_event_forget(e, exit_.event_id); /* what the callback does after the EXIT */
    cuEventRecord_params rp = {.hEvent = e, .hStream = NULL};
    assert_int_equal(decode1(CBID(cuEventRecord), CUPTI_API_ENTER, "cuEventRecord", &rp).event_id, fresh);
}

/* Another thread destroys event E and makes a new event that gets E's handle: a thread that
 * recorded E before (and keeps its id) names the new event's id at its next record. */
static void *destroy_and_remake(void *arg)
{
    CUevent e = (CUevent)arg;
    cuEventCreate_params cp = {.phEvent = &e, .Flags = 0};
    dls_cuda_event_forget(e, dls_cuda_event_id(e));
    return (void *)(uintptr_t)decode1(CBID(cuEventCreate), CUPTI_API_EXIT, "cuEventCreate", &cp).event_id;
}

static void a_handle_another_thread_reused_names_the_new_event(void **state)
{
    (void)state;
    CUevent e = (CUevent)0xe300;
    cuEventCreate_params cp = {.phEvent = &e, .Flags = 0};
    uint64_t old = decode1(CBID(cuEventCreate), CUPTI_API_EXIT, "cuEventCreate", &cp).event_id;
    cuEventRecord_params rp = {.hEvent = e, .hStream = NULL};
    for (int i = 0; i < 3; i++) /* known to this thread */
        assert_int_equal(decode1(CBID(cuEventRecord), CUPTI_API_ENTER, "cuEventRecord", &rp).event_id, old);
    pthread_t b;
    void *fresh;
    assert_int_equal(pthread_create(&b, NULL, destroy_and_remake, e), 0);
    assert_int_equal(pthread_join(b, &fresh), 0);
    assert_true((uint64_t)(uintptr_t)fresh > old);
    assert_int_equal(decode1(CBID(cuEventRecord), CUPTI_API_ENTER, "cuEventRecord", &rp).event_id,
                     (uint64_t)(uintptr_t)fresh);
}

static void stream_creation_and_destruction(void **state)
{
    (void)state;
    CUstream s = (CUstream)0x5400;
    fake_streams[0] = (fake_stream){.h = s, .id = 54, .flags = CU_STREAM_NON_BLOCKING};
    cuStreamCreate_params cp = {.phStream = &s, .Flags = CU_STREAM_NON_BLOCKING};
    dls_cuda_op op = decode1(CBID(cuStreamCreate), CUPTI_API_ENTER, "cuStreamCreate", &cp);
    assert_false(op.flags & DLS_OPF_HAS_STREAM);
    op = decode1(CBID(cuStreamCreate), CUPTI_API_EXIT, "cuStreamCreate", &cp);
    assert_int_equal(op.kind, DLS_OP_STREAM_CREATE);
    assert_false(op.stream.resolved); /* its id is asked at its first use */
    assert_int_equal(op.stream.kind, DLS_STREAM_NON_BLOCKING);
    cuStreamDestroy_v2_params dp = {.hStream = s};
    dls_cuda_streams_invalidate();
    op = decode1(CBID(cuStreamDestroy_v2), CUPTI_API_ENTER, "cuStreamDestroy_v2", &dp);
    assert_int_equal(op.stream.id, 54);
    fake_streams[0].h = NULL; /* destroyed */
    dls_cuda_streams_invalidate();
    op = decode1(CBID(cuStreamDestroy_v2), CUPTI_API_EXIT, "cuStreamDestroy_v2", &dp);
    assert_int_equal(op.kind, DLS_OP_STREAM_DESTROY);
    assert_int_equal(op.stream.id, 54);
}

/* A stream is resolved at its creation from the call: its kind from the flags passed, its context
 * the current one; its id is asked at its first use, and the driver is asked nothing else; the
 * context's id and device are asked once per context until a context may have been destroyed. A
 * green context's stream is not the current context's: the driver is asked. */
static void a_created_stream_is_resolved_from_its_call(void **state)
{
    (void)state;
    CUstream s = (CUstream)0x5a00, t = (CUstream)0x5b00;
    fake_streams[0] = (fake_stream){.h = s, .id = 90, .flags = 0}; /* flags the driver would tell */
    fake_streams[1] = (fake_stream){.h = t, .id = 91, .flags = CU_STREAM_NON_BLOCKING};
    cuStreamCreate_params cp = {.phStream = &s, .Flags = CU_STREAM_NON_BLOCKING};
    dls_cuda_op op = decode1(CBID(cuStreamCreate), CUPTI_API_EXIT, "cuStreamCreate", &cp);
    assert_true(op.flags & DLS_OPF_HAS_STREAM);
    assert_false(op.stream.resolved);
    assert_int_equal(op.stream.kind, DLS_STREAM_NON_BLOCKING); /* from the call, not asked */
    assert_int_equal(op.stream.ctx, (uintptr_t)FAKE_CTX);
    assert_int_equal(op.stream.ctx_id, (uintptr_t)FAKE_CTX >> 8);
    assert_int_equal(op.stream.device, 3);
    assert_int_equal(fake_get_id_calls, 0);
    assert_int_equal(fake_ctx_id_calls, 1);
    dls_cuda_stream used;
    dls_cuda_stream_resolve(s, 0, FAKE_CTX, &used); /* its first use */
    assert_true(used.resolved);
    assert_int_equal(used.id, 90);
    assert_int_equal(used.kind, DLS_STREAM_NON_BLOCKING);
    assert_int_equal(used.device, 3);
    assert_int_equal(fake_get_id_calls, 1);
    assert_int_equal(fake_stream_facts_calls, 0);
    cuStreamDestroy_v2_params dp = {.hStream = s};
    op = decode1(CBID(cuStreamDestroy_v2), CUPTI_API_ENTER, "cuStreamDestroy_v2", &dp);
    assert_int_equal(op.stream.id, 90);
    assert_int_equal(op.stream.kind, DLS_STREAM_NON_BLOCKING);
    assert_int_equal(fake_get_id_calls, 1); /* the first use's */
    dls_cuda_streams_invalidate();          /* destroyed */
    cuStreamCreateWithPriority_params pp = {.phStream = &t, .flags = CU_STREAM_NON_BLOCKING, .priority = -1};
    op = decode1(CBID(cuStreamCreateWithPriority), CUPTI_API_EXIT, "cuStreamCreateWithPriority", &pp);
    assert_int_equal(op.stream.kind, DLS_STREAM_NON_BLOCKING);
    assert_int_equal(op.stream.device, 3);
    assert_int_equal(fake_ctx_id_calls, 1); /* the context is known */
    dls_cuda_contexts_invalidate();         /* a context destroyed: asked again */
    fake_streams[1].id = 92;                /* and t's handle reused */
    op = decode1(CBID(cuStreamCreate), CUPTI_API_EXIT, "cuStreamCreate", &(cuStreamCreate_params){&t, 0});
    assert_int_equal(op.stream.kind, DLS_STREAM_BLOCKING);
    assert_int_equal(fake_ctx_id_calls, 2);
    dls_cuda_stream_resolve(t, 0, FAKE_CTX, &used);
    assert_int_equal(used.id, 92);
    assert_int_equal(used.kind, DLS_STREAM_BLOCKING);
    assert_int_equal(fake_stream_facts_calls, 0);
    dls_cuda_streams_invalidate();
    cuGreenCtxStreamCreate_params gp = {.phStream = &t, .flags = CU_STREAM_NON_BLOCKING};
    op = decode1(CBID(cuGreenCtxStreamCreate), CUPTI_API_EXIT, "cuGreenCtxStreamCreate", &gp);
    assert_int_equal(op.stream.id, 92);
    assert_int_equal(op.stream.kind, DLS_STREAM_NON_BLOCKING);
    assert_true(fake_stream_facts_calls > 0); /* its context asked */
}

/* Resolves the stream handle `arg` on a thread of its own. */
static void *resolve_elsewhere(void *arg)
{
    dls_cuda_stream r;
    dls_cuda_stream_resolve((CUstream)arg, 0, FAKE_CTX, &r);
    return r.resolved ? arg : NULL;
}

/* A stream destroyed before any use is not asked about: no thread can have resolved it, so no
 * model holds it. Once another thread has asked the driver about a stream, its destruction asks
 * the driver too: that thread may have resolved this stream. */
static void a_stream_destroyed_unused_is_not_asked_about(void **state)
{
    (void)state;
    CUstream s = (CUstream)0x5c00;
    fake_streams[0] = (fake_stream){.h = s, .id = 93, .flags = CU_STREAM_NON_BLOCKING};
    cuStreamCreate_params cp = {.phStream = &s, .Flags = CU_STREAM_NON_BLOCKING};
    cuStreamDestroy_v2_params dp = {.hStream = s};
    decode1(CBID(cuStreamCreate), CUPTI_API_EXIT, "cuStreamCreate", &cp);
    dls_cuda_op op = decode1(CBID(cuStreamDestroy_v2), CUPTI_API_ENTER, "cuStreamDestroy_v2", &dp);
    assert_true(op.flags & DLS_OPF_HAS_STREAM);
    assert_false(op.stream.resolved);
    assert_int_equal(op.stream.kind, DLS_STREAM_NON_BLOCKING);
    op = decode1(CBID(cuStreamDestroy_v2), CUPTI_API_EXIT, "cuStreamDestroy_v2", &dp);
    assert_false(op.stream.resolved);
    assert_int_equal(fake_get_id_calls, 0);
    dls_cuda_streams_invalidate(); /* destroyed */

    fake_streams[0].id = 94; /* the handle reused by a stream another thread uses */
    decode1(CBID(cuStreamCreate), CUPTI_API_EXIT, "cuStreamCreate", &cp);
    pthread_t other;
    void *resolved = NULL;
    assert_int_equal(pthread_create(&other, NULL, resolve_elsewhere, s), 0);
    assert_int_equal(pthread_join(other, &resolved), 0);
    assert_ptr_equal(resolved, s);
    int asked = fake_get_id_calls;
    op = decode1(CBID(cuStreamDestroy_v2), CUPTI_API_ENTER, "cuStreamDestroy_v2", &dp);
    assert_true(op.stream.resolved);
    assert_int_equal(op.stream.id, 94);
    assert_int_equal(fake_get_id_calls, asked + 1);
}

static void stream_resolution_is_cached_until_invalidated(void **state)
{
    (void)state;
    CUstream s = (CUstream)0x5500;
    fake_streams[0] = (fake_stream){.h = s, .id = 55};
    dls_cuda_stream a, b;
    dls_cuda_stream_resolve(s, 0, FAKE_CTX, &a);
    int calls = fake_get_id_calls;
    dls_cuda_stream_resolve(s, 0, FAKE_CTX, &b);
    assert_int_equal(fake_get_id_calls, calls);
    assert_int_equal(b.id, 55);
    /* The handle is destroyed and reused by a new stream. */
    fake_streams[0].id = 56;
    dls_cuda_streams_invalidate();
    dls_cuda_stream_resolve(s, 0, FAKE_CTX, &b);
    assert_int_equal(b.id, 56);
    /* An unknown handle is not resolved, and not cached. */
    dls_cuda_stream_resolve((CUstream)0x5600, 0, FAKE_CTX, &b);
    assert_false(b.resolved);
    assert_int_equal(b.kind, DLS_STREAM_UNKNOWN);
    /* Without a driver nothing resolves, and nothing crashes. */
    dls_drv_set_table_for_tests(&(dls_drv_table){0});
    dls_cuda_stream_resolve((CUstream)0x5700, 0, FAKE_CTX, &b);
    assert_false(b.resolved);
}

/* Stream handles come from a heap: handles a multiple of 1 KiB apart, used in turn, are each
 * asked about once, and the driver is not asked again until a stream is destroyed. */
static void handles_from_a_heap_stay_cached_side_by_side(void **state)
{
    (void)state;
    enum { N = 6 };
    CUstream h[N];
    for (int i = 0; i < N; i++) {
        h[i] = (CUstream)(uintptr_t)(0x10000 + 0x400 * i);
        fake_streams[i] = (fake_stream){.h = h[i], .id = 200 + (unsigned long long)i};
    }
    dls_cuda_stream r;
    int calls = fake_get_id_calls;
    for (int round = 0; round < 8; round++)
        for (int i = 0; i < N; i++) {
            dls_cuda_stream_resolve(h[i], 0, FAKE_CTX, &r);
            assert_int_equal(r.id, 200 + i);
        }
    assert_int_equal(fake_get_id_calls, calls + N);
    /* A destroyed stream's handle reused is a new stream: asked again, with its new id. */
    fake_streams[1].id = 300;
    dls_cuda_streams_invalidate();
    dls_cuda_stream_resolve(h[1], 0, FAKE_CTX, &r);
    assert_int_equal(r.id, 300);
    dls_cuda_stream_resolve(h[0], 0, FAKE_CTX, &r);
    assert_int_equal(r.id, 200);
    dls_cuda_stream_resolve(h[1], 0, FAKE_CTX, &r);
    assert_int_equal(r.id, 300);
    assert_int_equal(fake_get_id_calls, calls + N + 2);
}

/* A thread's latest resolution answers its handle again without the driver until a stream or
 * context is destroyed (a handle reused after destroy resolves afresh); an unresolved handle is
 * not kept; default-stream handles are per context and per form of the call. */
static void the_latest_resolution_goes_stale_with_the_cache(void **state)
{
    (void)state;
    CUstream s = (CUstream)0x5800;
    dls_cuda_stream_latest latest = {0};
    fake_streams[0] = (fake_stream){.h = s, .id = 58};
    const dls_cuda_stream *r = dls_cuda_stream_resolve_latest(&latest, s, 0, FAKE_CTX);
    assert_int_equal(r->id, 58);
    int calls = fake_get_id_calls;
    assert_ptr_equal(dls_cuda_stream_resolve_latest(&latest, s, 0, FAKE_CTX), r);
    assert_int_equal(fake_get_id_calls, calls); /* the thread's latest answer: no driver call */
    fake_streams[0].id = 59;                    /* destroyed, the handle reused */
    dls_cuda_streams_invalidate();
    assert_int_equal(dls_cuda_stream_resolve_latest(&latest, s, 0, FAKE_CTX)->id, 59);
    assert_false(dls_cuda_stream_resolve_latest(&latest, (CUstream)0x5900, 0, FAKE_CTX)->resolved);
    calls = fake_get_id_calls;
    assert_false(dls_cuda_stream_resolve_latest(&latest, (CUstream)0x5900, 0, FAKE_CTX)->resolved);
    assert_true(fake_get_id_calls > calls); /* not kept: asked again */
    assert_int_equal(dls_cuda_stream_resolve_latest(&latest, NULL, 0, FAKE_CTX)->id, FAKE_LEGACY_ID);
    assert_int_equal(dls_cuda_stream_resolve_latest(&latest, NULL, 1, FAKE_CTX)->id, FAKE_PER_THREAD_ID);
    r = dls_cuda_stream_resolve_latest(&latest, NULL, 0, (CUcontext)0x7100); /* another context's legacy stream */
    assert_int_equal(r->ctx, 0x7100);
}

static void syncs_queries_host_funcs_and_graphs(void **state)
{
    (void)state;
    cuStreamSynchronize_ptsz_params ss = {.hStream = NULL};
    dls_cuda_op op = decode1(CBID(cuStreamSynchronize_ptsz), CUPTI_API_EXIT, "cuStreamSynchronize_ptsz", &ss);
    assert_int_equal(op.kind, DLS_OP_STREAM_SYNC);
    assert_int_equal(op.stream.kind, DLS_STREAM_PER_THREAD);
    cuStreamQuery_params sq = {.hStream = NULL};
    op = decode1(CBID(cuStreamQuery), CUPTI_API_EXIT, "cuStreamQuery", &sq);
    assert_int_equal(op.kind, DLS_OP_STREAM_QUERY);
    cuCtxSynchronize_v2_params cs = {.ctx = (CUcontext)0x7100};
    op = decode1(CBID(cuCtxSynchronize_v2), CUPTI_API_ENTER, "cuCtxSynchronize_v2", &cs);
    assert_int_equal(op.kind, DLS_OP_CTX_SYNC);
    assert_int_equal(op.ctx, 0x7100);
    CUpti_CallbackData cb = fake_cb(CUPTI_API_ENTER, "cuCtxSynchronize", NULL);
    assert_int_equal(dls_cuda_decode(CBID(cuCtxSynchronize), &cb, 0, &op, &scratch), 1);
    assert_int_equal(op.ctx, (uintptr_t)FAKE_CTX);
    cuLaunchHostFunc_params hf = {.hStream = CU_STREAM_LEGACY};
    op = decode1(CBID(cuLaunchHostFunc), CUPTI_API_ENTER, "cuLaunchHostFunc", &hf);
    assert_int_equal(op.kind, DLS_OP_HOST_FUNC);
    assert_true(op.flags & DLS_OPF_HAS_STREAM);
    cuGraphLaunch_params gl = {.hGraph = (CUgraphExec)0xe1, .hStream = NULL};
    op = decode1(CBID(cuGraphLaunch), CUPTI_API_ENTER, "cuGraphLaunch", &gl);
    assert_int_equal(op.kind, DLS_OP_GRAPH_LAUNCH);
    assert_true(op.flags & DLS_OPF_CONSERVATIVE);
    assert_int_equal(op.exec, 0xe1);
    cuGraphLaunch_ptsz_params glp = {.hGraphExec = (CUgraphExec)0xe2, .hStream = NULL};
    op = decode1(CBID(cuGraphLaunch_ptsz), CUPTI_API_ENTER, "cuGraphLaunch_ptsz", &glp);
    assert_int_equal(op.exec, 0xe2);
    assert_int_equal(op.stream.kind, DLS_STREAM_PER_THREAD);
    cuStreamBeginCapture_v2_params bc = {.hStream = CU_STREAM_PER_THREAD, .mode = CU_STREAM_CAPTURE_MODE_RELAXED};
    op = decode1(CBID(cuStreamBeginCapture_v2), CUPTI_API_EXIT, "cuStreamBeginCapture_v2", &bc);
    assert_int_equal(op.kind, DLS_OP_CAPTURE_BEGIN);
    assert_true(op.flags & DLS_OPF_HAS_STREAM);
    assert_int_equal(op.stream.kind, DLS_STREAM_PER_THREAD);
    CUgraph graph = (CUgraph)0x91;
    cuStreamEndCapture_ptsz_params ec = {.hStream = NULL, .phGraph = &graph};
    op = decode1(CBID(cuStreamEndCapture_ptsz), CUPTI_API_EXIT, "cuStreamEndCapture_ptsz", &ec);
    assert_int_equal(op.kind, DLS_OP_CAPTURE_END);
    assert_int_equal(op.stream.kind, DLS_STREAM_PER_THREAD);
    assert_int_equal(op.graph, 0x91);
}

/* A captured graph is known by its handle at the capture's EXIT, an executable graph at its
 * instantiation's (with the graph it is made from), and each by the calls that end them. */
static void graphs_are_known_from_capture_to_destruction(void **state)
{
    (void)state;
    CUgraph graph = (CUgraph)0x91;
    cuStreamEndCapture_params ec = {.hStream = NULL, .phGraph = &graph};
    dls_cuda_op op = decode1(CBID(cuStreamEndCapture), CUPTI_API_ENTER, "cuStreamEndCapture", &ec);
    assert_int_equal(op.graph, 0); /* not written yet */
    CUgraphExec exec = (CUgraphExec)0xe1;
    cuGraphInstantiateWithFlags_params in = {.phGraphExec = &exec, .hGraph = graph, .flags = 0};
    op = decode1(CBID(cuGraphInstantiateWithFlags), CUPTI_API_ENTER, "cuGraphInstantiateWithFlags", &in);
    assert_int_equal(op.kind, DLS_OP_GRAPH_INSTANTIATE);
    assert_int_equal(op.exec, 0);
    op = decode1(CBID(cuGraphInstantiateWithFlags), CUPTI_API_EXIT, "cuGraphInstantiateWithFlags", &in);
    assert_int_equal(op.graph, 0x91);
    assert_int_equal(op.exec, 0xe1);
    cuGraphInstantiateWithParams_params ip = {.phGraphExec = &exec, .hGraph = graph};
    op = decode1(CBID(cuGraphInstantiateWithParams), CUPTI_API_EXIT, "cuGraphInstantiateWithParams", &ip);
    assert_int_equal(op.exec, 0xe1);
    cuGraphExecUpdate_v2_params up = {.hGraphExec = exec, .hGraph = graph};
    op = decode1(CBID(cuGraphExecUpdate_v2), CUPTI_API_EXIT, "cuGraphExecUpdate_v2", &up);
    assert_int_equal(op.kind, DLS_OP_GRAPH_EXEC_CHANGED);
    assert_int_equal(op.exec, 0xe1);
    cuGraphExecDestroy_params xd = {.hGraphExec = exec};
    op = decode1(CBID(cuGraphExecDestroy), CUPTI_API_EXIT, "cuGraphExecDestroy", &xd);
    assert_int_equal(op.kind, DLS_OP_GRAPH_EXEC_CHANGED);
    assert_int_equal(op.exec, 0xe1);
    cuGraphDestroy_params gd = {.hGraph = graph};
    op = decode1(CBID(cuGraphDestroy), CUPTI_API_EXIT, "cuGraphDestroy", &gd);
    assert_int_equal(op.kind, DLS_OP_GRAPH_DESTROY);
    assert_int_equal(op.graph, 0x91);
}

/* The work decoder takes the launches (but the multi-device one), the asynchronous linear
 * copies and every set, synchronous ones too (on the call's default stream); the general
 * decoder reads the synchronous copies through the same rows (calls.def), the N-D copies and
 * the rest. */
static void the_lane_decodes_launches_asynchronous_copies_and_sets(void **state)
{
    (void)state;
    cuMemsetD8_v2_params sync_set = {.dstDevice = 0x50000, .N = 16};
    cuMemsetD8Async_params async_set = {.dstDevice = 0x50000, .N = 16, .hStream = NULL};
    cuMemcpyHtoD_v2_params sync_copy = {.dstDevice = 0x9000, .srcHost = (void *)0x8000, .ByteCount = 8};
    cuLaunchGridAsync_params legacy = {.f = (CUfunction)0xf70, .hStream = (CUstream)0x5000};
    CUpti_CallbackData cb = fake_cb(CUPTI_API_ENTER, "cuMemsetD8_v2", &sync_set);
    dls_cuda_work w;
    dls_cuda_op op;
    assert_int_equal(dls_cuda_decode_work(CBID(cuMemsetD8_v2), &cb, &w, scratch.words, DLS_SCRATCH_WORDS), 1);
    assert_int_equal(w.kind, DLS_OP_MEMSET);
    assert_false(w.flags & DLS_OPF_ASYNC);
    assert_int_equal(w.handle, 0);
    assert_int_equal(w.per_thread, 0);
    assert_int_equal(dls_cuda_decode(CBID(cuMemsetD8_v2), &cb, 0, &op, &scratch), 0);
    cb = fake_cb(CUPTI_API_ENTER, "cuMemcpyHtoD_v2", &sync_copy);
    assert_int_equal(dls_cuda_decode_work(CBID(cuMemcpyHtoD_v2), &cb, &w, scratch.words, DLS_SCRATCH_WORDS), 0);
    assert_int_equal(dls_cuda_decode(CBID(cuMemcpyHtoD_v2), &cb, 0, &op, &scratch), 1);
    cb = fake_cb(CUPTI_API_ENTER, "cuMemsetD8Async", &async_set);
    assert_int_equal(dls_cuda_decode_work(CBID(cuMemsetD8Async), &cb, &w, scratch.words, DLS_SCRATCH_WORDS), 1);
    assert_int_equal(w.kind, DLS_OP_MEMSET);
    assert_true(w.flags & DLS_OPF_ASYNC);
    assert_int_equal(w.nranges, 1);
    assert_int_equal(w.ranges[0].len, 16);
    cb = fake_cb(CUPTI_API_ENTER, "cuLaunchGridAsync", &legacy); /* arguments set by cuParamSet*: unseen */
    assert_int_equal(dls_cuda_decode_work(CBID(cuLaunchGridAsync), &cb, &w, scratch.words, DLS_SCRATCH_WORDS), 1);
    assert_int_equal(w.kind, DLS_OP_LAUNCH);
    assert_int_equal(w.flags, DLS_OPF_ASYNC | DLS_OPF_CONSERVATIVE);
    assert_int_equal(w.handle, 0x5000);
    assert_int_equal(w.nwords, 0);
}

/* Every enabled driver id decodes, even from all-zero parameters (NULL pointers), by exactly
 * one of the two decoders: the work decoder only ids of stream work (whose ENTER the gate may
 * hold back), into launches, copies and sets; that every row of calls.def but an invalidation or a
 * range change has a decoder is checked at compile time. */
static void every_enabled_driver_call_is_decoded_one_way(void **state)
{
    (void)state;
    static uint64_t zero[64];
    size_t n;
    const CUpti_CallbackId *ids = dls_cuda_driver_cbids(&n);
    assert_true(n > 100);
    for (size_t i = 0; i < n; i++) {
        CUpti_CallbackData cb = fake_cb(CUPTI_API_ENTER, "x", zero);
        dls_cuda_op op;
        dls_cuda_work w;
        int as_op = dls_cuda_decode(ids[i], &cb, 0, &op, &scratch);
        int as_work = dls_cuda_decode_work(ids[i], &cb, &w, scratch.words, DLS_SCRATCH_WORDS);
        dls_cuda_cbid_class cls = dls_cuda_cbid_class_of(ids[i]);
        if (cls == DLS_CBID_INVALIDATION || cls == DLS_CBID_RANGES ||
            ids[i] == CBID(cuLaunchCooperativeKernelMultiDevice))
            assert_int_equal(as_op + as_work, 0);
        else if (as_op + as_work != 1)
            fail_msg("driver cbid %u is enabled but decoded %d times", ids[i], as_op + as_work);
        if (as_work) {
            assert_int_equal(cls, DLS_CBID_STREAM_WORK);
            assert_true(w.kind == DLS_OP_LAUNCH || w.kind == DLS_OP_MEMCPY || w.kind == DLS_OP_MEMSET);
        }
        if (as_op + as_work && (as_work ? w.kind : op.kind) == DLS_OP_LAUNCH) /* a launch is stream work */
            assert_int_equal(cls, DLS_CBID_STREAM_WORK);
    }
    CUpti_CallbackData cb = fake_cb(CUPTI_API_ENTER, "cuMemAlloc_v2", zero);
    dls_cuda_op op;
    assert_int_equal(dls_cuda_decode(CBID(cuMemAlloc_v2), &cb, 0, &op, &scratch), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(launch_words_follow_the_parameter_layout, setup),
        cmocka_unit_test_setup(the_latest_resolution_goes_stale_with_the_cache, setup),
        cmocka_unit_test_setup(handles_from_a_heap_stay_cached_side_by_side, setup),
        cmocka_unit_test_setup(layout_is_asked_once_per_function, setup),
        cmocka_unit_test_setup(a_cukernel_handle_uses_kernel_param_info, setup),
        cmocka_unit_test_setup(extra_buffer_is_scanned_whole, setup),
        cmocka_unit_test_setup(unknown_layout_is_conservative, setup),
        cmocka_unit_test_setup(launch_ex_takes_the_stream_from_its_config, setup),
        cmocka_unit_test_setup(multi_device_launch_is_one_op_per_device, setup),
        cmocka_unit_test_setup(sync_copy_runs_on_the_default_stream, setup),
        cmocka_unit_test_setup(async_copy_is_on_its_stream, setup),
        cmocka_unit_test_setup(array_side_has_no_range, setup),
        cmocka_unit_test_setup(copies_2d_and_3d_give_bounding_ranges, setup),
        cmocka_unit_test_setup(sets_cover_their_elements, setup),
        cmocka_unit_test_setup(batches_list_every_copy_and_3d_batches_are_conservative, setup),
        cmocka_unit_test_setup(free_reports_the_whole_allocation_at_both_phases, setup),
        cmocka_unit_test_setup(events_keep_ids_until_destroyed, setup),
        cmocka_unit_test_setup(a_handle_reused_before_the_destroys_exit_keeps_the_new_events_id, setup),
        cmocka_unit_test_setup(a_handle_another_thread_reused_names_the_new_event, setup),
        cmocka_unit_test_setup(stream_creation_and_destruction, setup),
        cmocka_unit_test_setup(a_created_stream_is_resolved_from_its_call, setup),
        cmocka_unit_test_setup(a_stream_destroyed_unused_is_not_asked_about, setup),
        cmocka_unit_test_setup(stream_resolution_is_cached_until_invalidated, setup),
        cmocka_unit_test_setup(syncs_queries_host_funcs_and_graphs, setup),
        cmocka_unit_test_setup(graphs_are_known_from_capture_to_destruction, setup),
        cmocka_unit_test_setup(without_scratch_an_operation_with_ranges_or_words_is_conservative, setup),
        cmocka_unit_test_setup(the_lane_decodes_launches_asynchronous_copies_and_sets, setup),
        cmocka_unit_test_setup(every_enabled_driver_call_is_decoded_one_way, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
