/* The wrapped DLPack C exchange API (see exchange_api.h). */
#include "exchange_api.h"

#include "../report/warn.h"
#include "capsule.h"
#include "profiles.h"
#include "resolve.h"
#include "wrap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

typedef struct {
    const dls_dlpack_exchange_api *orig;
    dls_dlpack_exchange_api table;
    const dls_profile *exp, *imp, *fill;
    const char *lib;
} wrapped_api;

/* The exchange API's consumer learns the producer's stream from current_work_stream, as the
 * __dlpack__(stream=...) protocol does: its races get the protocol's fix line. */
#define API_PATH DLS_XPATH_PROTOCOL

static wrapped_api g_api[DLS_EXCHANGE_APIS];
static atomic_int g_n;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The wrappers of slot K (each table needs its own functions: they carry no context). */
#define SLOT_FUNCS(K)                                                     \
    static int from_py_##K(void *py, DLManagedTensorVersioned **out)      \
    {                                                                     \
        const wrapped_api *w = &g_api[K];                                 \
        int rc = w->orig->managed_tensor_from_py_object_no_sync(py, out); \
        if (rc == 0 && out && *out)                                       \
            dls_wrap_export(w->exp, w->lib, *out);                        \
        return rc;                                                        \
    }                                                                     \
    static int to_py_##K(DLManagedTensorVersioned *t, void **out)         \
    {                                                                     \
        const wrapped_api *w = &g_api[K];                                 \
        if (t)                                                            \
            dls_wrap_import(w->imp, w->lib, t);                           \
        return w->orig->managed_tensor_to_py_object_no_sync(t, out);      \
    }                                                                     \
    static int dltensor_##K(void *py, DLTensor *out)                      \
    {                                                                     \
        const wrapped_api *w = &g_api[K];                                 \
        int rc = w->orig->dltensor_from_py_object_no_sync(py, out);       \
        if (rc == 0)                                                      \
            dls_wrap_export_filled(w->fill, w->lib, out);                 \
        return rc;                                                        \
    }
SLOT_FUNCS(0)
SLOT_FUNCS(1)
SLOT_FUNCS(2)
SLOT_FUNCS(3)

static int (*const g_from_py[DLS_EXCHANGE_APIS])(void *, DLManagedTensorVersioned **) = {from_py_0, from_py_1,
                                                                                         from_py_2, from_py_3};
static int (*const g_to_py[DLS_EXCHANGE_APIS])(DLManagedTensorVersioned *, void **) = {to_py_0, to_py_1, to_py_2,
                                                                                       to_py_3};
static int (*const g_dltensor[DLS_EXCHANGE_APIS])(void *, DLTensor *) = {dltensor_0, dltensor_1, dltensor_2,
                                                                         dltensor_3};

const dls_dlpack_exchange_api *dls_exchange_api_wrap(const dls_dlpack_exchange_api *api)
{
    if (!api)
        return api;
    int n = atomic_load_explicit(&g_n, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (g_api[i].orig == api)
            return &g_api[i].table;
    /* Named after the object that defines its functions; looked up before the lock. */
    const void *fn = api->managed_tensor_from_py_object_no_sync
                         ? (const void *)api->managed_tensor_from_py_object_no_sync
                         : (const void *)api->current_work_stream;
    const char *lib = dls_object_path(fn);
    const dls_profile *exp = dls_capsule_row(lib, "DLPackExchangeAPI.managed_tensor_from_py_object_no_sync",
                                             DLS_ROLE_EXPORT, DLS_WHERE_RET, 1, API_PATH);
    const dls_profile *imp = dls_capsule_row(lib, "DLPackExchangeAPI.managed_tensor_to_py_object_no_sync",
                                             DLS_ROLE_IMPORT, DLS_WHERE_ARG, 1, API_PATH);
    const dls_profile *fill = dls_capsule_row(lib, "DLPackExchangeAPI.dltensor_from_py_object_no_sync", DLS_ROLE_EXPORT,
                                              DLS_WHERE_FILL, 0, API_PATH);
    const dls_dlpack_exchange_api *out = api;
    pthread_mutex_lock(&g_lock);
    n = atomic_load_explicit(&g_n, memory_order_relaxed);
    for (int i = 0; i < n && out == api; i++)
        if (g_api[i].orig == api)
            out = &g_api[i].table;
    if (out == api && n < DLS_EXCHANGE_APIS && exp && imp && fill) {
        wrapped_api *w = &g_api[n];
        *w = (wrapped_api){.orig = api, .table = *api, .exp = exp, .imp = imp, .fill = fill, .lib = lib};
        if (api->managed_tensor_from_py_object_no_sync)
            w->table.managed_tensor_from_py_object_no_sync = g_from_py[n];
        if (api->managed_tensor_to_py_object_no_sync)
            w->table.managed_tensor_to_py_object_no_sync = g_to_py[n];
        if (api->dltensor_from_py_object_no_sync)
            w->table.dltensor_from_py_object_no_sync = g_dltensor[n];
        atomic_store_explicit(&g_n, n + 1, memory_order_release);
        out = &w->table;
    }
    pthread_mutex_unlock(&g_lock);
    if (out == api)
        dls_warn_once("exchange-apis", "more than %d DLPack exchange API tables; the one of %s is not traced",
                      DLS_EXCHANGE_APIS, lib);
    return out;
}
