/* scen_kineto: the side_stream exchange inside a program with a CUPTI client shaped like Kineto,
 * the PyTorch profiler's (torch 2.11 and before), for test_profilers.
 *
 * The client subscribes with the unversioned cuptiSubscribe, before CUDA starts
 * (KINETO_WHEN=before, as Kineto at start-up) or after (KINETO_WHEN=after, the default: dlsync
 * subscribed at cuInit already). A refusal is Kineto's: it prints "CUPTI initialization failed -
 * CUDA profiler activities will be missing" and records nothing. Subscribed, a profiling session
 * registers activity buffers, enables the kernel and memcpy activity kinds, then:
 *   - enables the runtime's cudaMemcpy callback, makes 25 copies (50 callbacks: ENTER and EXIT);
 *   - disables it, makes 10 copies (none), checks cuptiGetCallbackState says 0;
 *   - enables the whole runtime domain (cuptiEnableDomain), makes 5 copies (10), disables it;
 *   - runs the side_stream exchange (its kernels are activity records);
 *   - flushes the activity buffers.
 * A callback with other userdata, a cudaMemcpy callback while disabled, or an EXIT that does not
 * find the correlation data its ENTER wrote counts as wrong. KINETO_TEARDOWN=1 (Kineto's
 * TEARDOWN_CUPTI=1) ends the session with activity disabled, cuptiUnsubscribe and cuptiFinalize,
 * and runs a second session after subscribing again. KINETO_DLOPEN=1 finds every CUPTI function
 * with dlopen and dlsym instead of linking libcupti. At exit it prints per session
 * "kineto: session N: callbacks=C wrong=W kernels=K copies=M" or the refusal. */
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scen.h"

#define FN(ret, name, params) ret(CUPTIAPI *name) params;
typedef struct {
    FN(CUptiResult, subscribe, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))
    FN(CUptiResult, unsubscribe, (CUpti_SubscriberHandle))
    FN(CUptiResult, enable_callback, (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId))
    FN(CUptiResult, enable_domain, (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain))
    FN(CUptiResult, get_state, (uint32_t *, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId))
    FN(CUptiResult, finalize, (void))
    FN(CUptiResult, activity_register, (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))
    FN(CUptiResult, activity_enable, (CUpti_ActivityKind))
    FN(CUptiResult, activity_disable, (CUpti_ActivityKind))
    FN(CUptiResult, activity_flush_all, (uint32_t))
    FN(CUptiResult, activity_next, (uint8_t *, size_t, CUpti_Activity **))
} cupti_fns;
#undef FN

static cupti_fns g_cupti;

/* What one profiling session saw. */
typedef struct {
    int refused, callbacks, wrong, kernels, copies;
    int memcpy_on; /* the cudaMemcpy callback is meant to be enabled */
} session;

static session g_sessions[2];
static int g_nsessions;
static session *g_now;

static void load(void)
{
    const char *d = getenv("KINETO_DLOPEN");
    if (!d || strcmp(d, "1") != 0) {
        g_cupti = (cupti_fns){cuptiSubscribe,
                              cuptiUnsubscribe,
                              cuptiEnableCallback,
                              cuptiEnableDomain,
                              cuptiGetCallbackState,
                              cuptiFinalize,
                              cuptiActivityRegisterCallbacks,
                              cuptiActivityEnable,
                              cuptiActivityDisable,
                              cuptiActivityFlushAll,
                              cuptiActivityGetNextRecord};
        return;
    }
    void *lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "kineto: cannot load libcupti.so.13\n");
        exit(2);
    }
    *(void **)&g_cupti.subscribe = dlsym(lib, "cuptiSubscribe");
    *(void **)&g_cupti.unsubscribe = dlsym(lib, "cuptiUnsubscribe");
    *(void **)&g_cupti.enable_callback = dlsym(lib, "cuptiEnableCallback");
    *(void **)&g_cupti.enable_domain = dlsym(lib, "cuptiEnableDomain");
    *(void **)&g_cupti.get_state = dlsym(lib, "cuptiGetCallbackState");
    *(void **)&g_cupti.finalize = dlsym(lib, "cuptiFinalize");
    *(void **)&g_cupti.activity_register = dlsym(lib, "cuptiActivityRegisterCallbacks");
    *(void **)&g_cupti.activity_enable = dlsym(lib, "cuptiActivityEnable");
    *(void **)&g_cupti.activity_disable = dlsym(lib, "cuptiActivityDisable");
    *(void **)&g_cupti.activity_flush_all = dlsym(lib, "cuptiActivityFlushAll");
    *(void **)&g_cupti.activity_next = dlsym(lib, "cuptiActivityGetNextRecord");
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    session *s = g_now;
    if (!s)
        return;
    const CUpti_CallbackData *d = data;
    if (userdata != &g_cupti || domain != CUPTI_CB_DOMAIN_RUNTIME_API) {
        s->wrong++;
        return;
    }
    if (cbid != CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020)
        return; /* the rest of the runtime domain, while it is enabled whole */
    if (!s->memcpy_on)
        s->wrong++;
    if (d->callbackSite == CUPTI_API_ENTER)
        *d->correlationData = 0x4B494E45544Full ^ d->correlationId;
    else if (*d->correlationData != (0x4B494E45544Full ^ d->correlationId))
        s->wrong++;
    s->callbacks++;
}

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 64 * 1024;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    while (g_now && g_cupti.activity_next(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            g_now->kernels++;
        else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
            g_now->copies++;
    }
    free(buffer);
}

static CUpti_SubscriberHandle g_sub;

/* Kineto's start: subscribe; 1 when subscribed. */
static int init(void)
{
    session *s = &g_sessions[g_nsessions++];
    g_now = s;
    CUptiResult r = g_cupti.subscribe(&g_sub, on_callback, &g_cupti);
    if (r == CUPTI_SUCCESS)
        return 1;
    if (r != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        fprintf(stderr, "kineto: CUPTI error %d\n", (int)r);
        exit(2);
    }
    s->refused = 1;
    g_now = NULL;
    return 0;
}

/* n synchronous copies of one int to the device. */
static void copies(int *dev, int n)
{
    for (int i = 0; i < n; i++)
        if (cudaMemcpy(dev, &i, sizeof i, cudaMemcpyHostToDevice) != cudaSuccess) {
            fprintf(stderr, "kineto: cudaMemcpy failed\n");
            exit(2);
        }
}

static void must(CUptiResult r, const char *what)
{
    if (r != CUPTI_SUCCESS) {
        fprintf(stderr, "kineto: %s: CUPTI error %d\n", what, (int)r);
        exit(2);
    }
}

/* One profiling session (see above) around the exchange. */
static void profile(int racy, int teardown)
{
    session *s = g_now;
    int *dev = NULL;
    if (cudaMalloc((void **)&dev, sizeof *dev) != cudaSuccess)
        exit(2);
    if (s) {
        must(g_cupti.activity_register(on_request, on_complete), "cuptiActivityRegisterCallbacks");
        must(g_cupti.activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
        must(g_cupti.activity_enable(CUPTI_ACTIVITY_KIND_MEMCPY), "cuptiActivityEnable");
        s->memcpy_on = 1;
        must(g_cupti.enable_callback(1, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020),
             "cuptiEnableCallback");
    }
    copies(dev, 25);
    if (s) {
        must(g_cupti.enable_callback(0, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020),
             "cuptiEnableCallback");
        s->memcpy_on = 0;
    }
    copies(dev, 10);
    if (s) {
        uint32_t on = 1;
        must(g_cupti.get_state(&on, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020),
             "cuptiGetCallbackState");
        if (on)
            s->wrong++;
        must(g_cupti.enable_domain(1, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain");
        s->memcpy_on = 1;
    }
    copies(dev, 5);
    if (s) {
        must(g_cupti.enable_domain(0, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain");
        s->memcpy_on = 0;
    }
    cudaFree(dev);
    scen_side_stream(racy, 4);
    if (!s)
        return;
    must(g_cupti.activity_flush_all(1), "cuptiActivityFlushAll");
    if (!teardown)
        return;
    must(g_cupti.activity_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityDisable");
    must(g_cupti.activity_disable(CUPTI_ACTIVITY_KIND_MEMCPY), "cuptiActivityDisable");
    must(g_cupti.unsubscribe(g_sub), "cuptiUnsubscribe");
    must(g_cupti.finalize(), "cuptiFinalize");
    g_now = NULL;
}

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    const char *when = getenv("KINETO_WHEN");
    const char *t = getenv("KINETO_TEARDOWN");
    int before = when && strcmp(when, "before") == 0, teardown = t && strcmp(t, "1") == 0;
    load();
    if (before)
        init();
    cudaFree(NULL); /* starts CUDA: dlsync subscribes now */
    if (!before)
        init();
    profile(racy, teardown);
    if (teardown) {
        init();
        profile(racy, 0);
    }
    for (int i = 0; i < g_nsessions; i++) {
        const session *s = &g_sessions[i];
        if (s->refused)
            printf("kineto: session %d: CUPTI initialization failed - CUDA profiler activities will be missing\n",
                   i + 1);
        else
            printf("kineto: session %d: callbacks=%d wrong=%d kernels=%d copies=%d\n", i + 1, s->callbacks, s->wrong,
                   s->kernels, s->copies);
    }
    return 0;
}
