/* gpu_cupti_share: whether a real CUPTI behaves as the simulator's model of its generation
 * (tests/cudasim/cupti_callbacks.c) when two clients subscribe the way dlsync and a profiler do
 * (cuptiSubscribe_v2 with the layout of shim/cuda/cupti_subscriber.h).
 *
 * Usage: gpu_cupti_share [LIBCUPTI]   (default libcupti.so.13; libcuda.so.1 from the system)
 * Before CUPTI 13.2 first a subscription with the 13.2 struct size (refused, so it fixes
 * nothing; from 13.2 on it is not made, as a first subscription would fix the process's mode),
 * then two subscribers, A (cuMemAlloc_v2) and B (cuMemFree_v2), before cuInit, both asking for
 * multi-subscriber mode when the CUPTI (cuptiGetVersion 130300 or later) and the driver
 * (cuDriverGetVersion 13030 or later) can share; then one allocation and one free on device 0. Prints "cupti: version N", the
 * result of each subscription and "<A|B>: calls=N foreign=N" (calls: ENTER and EXIT of its own
 * id; foreign: anything else); each CUPTI result with its name (cuptiGetResultString), and a
 * driver call's error by name, so a CUPTI the driver refuses says how. Exits 0 when the CUPTI matched the model: both get exactly
 * their calls where both can share; otherwise B is refused with A's name and A gets exactly
 * its calls, and before 13.2 the 13.2 struct size is refused (CUPTI_ERROR_INVALID_PARAMETER). With libdlsync.so preloaded
 * (DLSYNC_VERBOSE=1) dlsync subscribes as a third client at cuInit. */
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "../../shim/cuda/cupti_subscriber.h"

typedef struct {
    const char *name;
    CUpti_CallbackId cbid;
    int calls, foreign;
} client;

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)data;
    client *c = userdata;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == c->cbid)
        c->calls++;
    else
        c->foreign++;
}

static CUptiResult (*g_result_string)(CUptiResult, const char **);

/* "N (NAME)" for a CUPTI result, in buf. */
static const char *result_name(CUptiResult r, char *buf, size_t n)
{
    const char *name = NULL;
    if (!g_result_string || g_result_string(r, &name) != CUPTI_SUCCESS || !name)
        name = "?";
    snprintf(buf, n, "%d (%s)", (int)r, name);
    return buf;
}

int main(int argc, char **argv)
{
    const char *cupti_path = argc > 1 ? argv[1] : "libcupti.so.13";
    void *cupti = dlopen(cupti_path, RTLD_NOW | RTLD_LOCAL);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cupti || !cuda) {
        printf("cupti: cannot load %s or libcuda.so.1 (%s)\n", cupti_path, dlerror());
        return 1;
    }
    CUptiResult (*get_version)(uint32_t *) = (CUptiResult(*)(uint32_t *))dlsym(cupti, "cuptiGetVersion");
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *, dls_cupti_subscriber_params *) =
        (CUptiResult(*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *, dls_cupti_subscriber_params *))dlsym(
            cupti, "cuptiSubscribe_v2");
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle) =
        (CUptiResult(*)(CUpti_SubscriberHandle))dlsym(cupti, "cuptiUnsubscribe");
    CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) = (CUptiResult(*)(
        uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId))dlsym(cupti, "cuptiEnableCallback");
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(cuda, "cuInit");
    CUresult (*retain)(CUcontext *, CUdevice) =
        (CUresult(*)(CUcontext *, CUdevice))dlsym(cuda, "cuDevicePrimaryCtxRetain");
    CUresult (*set_current)(CUcontext) = (CUresult(*)(CUcontext))dlsym(cuda, "cuCtxSetCurrent");
    CUresult (*mem_alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))dlsym(cuda, "cuMemAlloc_v2");
    CUresult (*mem_free)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))dlsym(cuda, "cuMemFree_v2");
    CUresult (*error_name)(CUresult, const char **) =
        (CUresult(*)(CUresult, const char **))dlsym(cuda, "cuGetErrorName");
    g_result_string = (CUptiResult(*)(CUptiResult, const char **))dlsym(cupti, "cuptiGetResultString");
    char rbuf[160];
    if (!get_version || !subscribe || !unsubscribe || !enable || !init || !retain || !set_current || !mem_alloc ||
        !mem_free) {
        printf("cupti: a CUPTI or driver function is missing\n");
        return 1;
    }
    CUresult (*driver_version)(int *) = (CUresult(*)(int *))dlsym(cuda, "cuDriverGetVersion");
    uint32_t version = 0;
    int driver = 0;
    get_version(&version);
    if (!driver_version || driver_version(&driver) != CUDA_SUCCESS)
        driver = 0;
    int multi = dls_cupti_can_share(version) && dls_cupti_driver_can_share(driver);
    printf("cupti: version %u, driver %d (multi-subscriber mode %s)\n", version, driver,
           multi ? "offered" : "not offered");
    CUpti_SubscriberHandle h;
    int ok = 1;
    if (!dls_cupti_has_allow_multiple(version)) {
        dls_cupti_subscriber_params big = {.structSize = DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI,
                                           .subscriberName = "big"};
        CUptiResult big_r = subscribe(&h, on_callback, NULL, &big);
        printf("subscribe with the 13.2 struct size: %s\n", result_name(big_r, rbuf, sizeof rbuf));
        if (big_r == CUPTI_SUCCESS)
            unsubscribe(h);
        ok = big_r == CUPTI_ERROR_INVALID_PARAMETER;
    }
    client clients[2] = {{"A", CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, 0, 0},
                         {"B", CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, 0, 0}};
    CUptiResult result[2];
    for (int i = 0; i < 2; i++) {
        char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
        dls_cupti_subscriber_params p = {
            .structSize = dls_cupti_subscriber_params_size(version),
            .subscriberName = clients[i].name,
            .oldSubscriberName = holder,
            .oldSubscriberSize = sizeof holder,
            .allowMultipleSubscribers = (uint8_t)multi,
        };
        result[i] = subscribe(&h, on_callback, &clients[i], &p);
        printf("subscribe %s: %s%s%s\n", clients[i].name, result_name(result[i], rbuf, sizeof rbuf),
               holder[0] ? " held by " : "", holder);
        if (result[i] == CUPTI_SUCCESS)
            ok &= enable(1, h, CUPTI_CB_DOMAIN_DRIVER_API, clients[i].cbid) == CUPTI_SUCCESS;
        else
            ok &= !multi && i == 1 && result[i] == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED &&
                  strcmp(holder, "CUPTI for A") == 0;
    }
    CUcontext ctx;
    CUdeviceptr d;
    CUresult cr;
    const char *step = NULL;
    if ((cr = init(0)) != CUDA_SUCCESS)
        step = "cuInit";
    else if ((cr = retain(&ctx, 0)) != CUDA_SUCCESS)
        step = "cuDevicePrimaryCtxRetain";
    else if ((cr = set_current(ctx)) != CUDA_SUCCESS)
        step = "cuCtxSetCurrent";
    else if ((cr = mem_alloc(&d, 256)) != CUDA_SUCCESS)
        step = "cuMemAlloc_v2";
    else if ((cr = mem_free(d)) != CUDA_SUCCESS)
        step = "cuMemFree_v2";
    if (cr != CUDA_SUCCESS) {
        const char *name = NULL;
        if (!error_name || error_name(cr, &name) != CUDA_SUCCESS || !name)
            name = "?";
        printf("cuda: %s failed: %d (%s)\n", step, (int)cr, name);
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        printf("%s: calls=%d foreign=%d\n", clients[i].name, clients[i].calls, clients[i].foreign);
        ok &= clients[i].calls == (result[i] == CUPTI_SUCCESS ? 2 : 0) && clients[i].foreign == 0;
    }
    printf("cupti: %s the simulator's model\n", ok ? "matches" : "DIFFERS FROM");
    fflush(stdout);
    return ok ? 0 : 1;
}
