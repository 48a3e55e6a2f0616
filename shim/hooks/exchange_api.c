/* The wrapped DLPack C exchange API (see exchange_api.h). */
#include "exchange_api.h"

#include "../common/mutex.h"
#include "../report/warn.h"
#include "capsule_rows.h"
#include "profiles.h"
#include "record.h"
#include "resolve.h"
#include "wrap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

typedef struct {
    const dls_dlpack_exchange_api *orig;
    dls_dlpack_exchange_api table;
    const dls_profile *exp, *imp, *fill, *stream; /* stream: a row only for its names */
    const char *lib;
} wrapped_api;

static wrapped_api g_api[DLS_EXCHANGE_APIS];
static atomic_int g_n;
static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The wrappers of slot K (each table needs its own functions: they carry no context). Each
 * passes straight through when called inside another wrapped call (dls_wrap_enter). */
#define SLOT_FUNCS(K)                                                              \
    static int from_py_##K(void *py, DLManagedTensorVersioned **out)               \
    {                                                                              \
        const wrapped_api *w = &g_api[K];                                          \
        if (!dls_wrap_enter())                                                     \
            return w->orig->managed_tensor_from_py_object_no_sync(py, out);        \
        int rc = w->orig->managed_tensor_from_py_object_no_sync(py, out);          \
        dls_wrap_leave();                                                          \
        if (rc == 0 && out && *out)                                                \
            dls_wrap_export(w->exp, w->lib, *out);                                 \
        return rc;                                                                 \
    }                                                                              \
    static int to_py_##K(DLManagedTensorVersioned *t, void **out)                  \
    {                                                                              \
        const wrapped_api *w = &g_api[K];                                          \
        if (!dls_wrap_enter())                                                     \
            return w->orig->managed_tensor_to_py_object_no_sync(t, out);           \
        if (t)                                                                     \
            dls_wrap_import(w->imp, w->lib, t);                                    \
        int rc = w->orig->managed_tensor_to_py_object_no_sync(t, out);             \
        dls_wrap_leave();                                                          \
        return rc;                                                                 \
    }                                                                              \
    static int dltensor_##K(void *py, DLTensor *out)                               \
    {                                                                              \
        const wrapped_api *w = &g_api[K];                                          \
        if (!dls_wrap_enter())                                                     \
            return w->orig->dltensor_from_py_object_no_sync(py, out);              \
        int rc = w->orig->dltensor_from_py_object_no_sync(py, out);                \
        dls_wrap_leave();                                                          \
        if (rc == 0 && out)                                                        \
            dls_wrap_export_filled(w->fill, w->lib, out);                          \
        return rc;                                                                 \
    }                                                                              \
    static int stream_##K(DLDeviceType type, int32_t id, void **out)               \
    {                                                                              \
        const wrapped_api *w = &g_api[K];                                          \
        int rc = w->orig->current_work_stream(type, id, out);                      \
        if (rc == 0 && out)                                                        \
            dls_record_work_stream(w->stream, w->lib, (DLDevice){type, id}, *out); \
        return rc;                                                                 \
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
static int (*const g_stream[DLS_EXCHANGE_APIS])(DLDeviceType, int32_t, void **) = {stream_0, stream_1, stream_2,
                                                                                   stream_3};

/* The profile row of field `field` of the table defined in lib. */
static const dls_profile *row(const char *lib, const char *field, dls_role role, dls_where where)
{
    char display[64];
    snprintf(display, sizeof display, "DLPackExchangeAPI.%s", field);
    return dls_capsule_row(lib, display, role, where, 1, DLS_XPATH_EXCHANGE_API);
}

/* dlsync's copy of api in slot w: every non-NULL wrapped field replaced by slot n's wrapper. */
static void fill_slot(wrapped_api *w, int n)
{
    const dls_dlpack_exchange_api *api = w->orig;
    w->table = *api;
    if (api->managed_tensor_from_py_object_no_sync)
        w->table.managed_tensor_from_py_object_no_sync = g_from_py[n];
    if (api->managed_tensor_to_py_object_no_sync)
        w->table.managed_tensor_to_py_object_no_sync = g_to_py[n];
    if (api->dltensor_from_py_object_no_sync)
        w->table.dltensor_from_py_object_no_sync = g_dltensor[n];
    if (api->current_work_stream)
        w->table.current_work_stream = g_stream[n];
}

const dls_dlpack_exchange_api *dls_exchange_api_wrap(const dls_dlpack_exchange_api *api)
{
    if (!api)
        return api;
    int n = atomic_load_explicit(&g_n, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (g_api[i].orig == api)
            return &g_api[i].table;
    DLPackVersion v = api->header.version;
    if (v.major != DLS_EXCHANGE_API_MAJOR || v.minor > DLS_EXCHANGE_API_MINOR) {
        dls_warn_once("exchange-api-version",
                      "a DLPack exchange API table of version %u.%u (dlsync knows %d.%d at most); it is not traced",
                      v.major, v.minor, DLS_EXCHANGE_API_MAJOR, DLS_EXCHANGE_API_MINOR);
        return api;
    }
    /* Named after the object that defines its functions; looked up before the lock. */
    const void *fn = api->managed_tensor_from_py_object_no_sync
                         ? (const void *)api->managed_tensor_from_py_object_no_sync
                         : (const void *)api->current_work_stream;
    const char *lib = dls_object_path(fn);
    wrapped_api w = {
        .orig = api,
        .exp = row(lib, "managed_tensor_from_py_object_no_sync", DLS_ROLE_EXPORT, DLS_WHERE_RET),
        .imp = row(lib, "managed_tensor_to_py_object_no_sync", DLS_ROLE_IMPORT, DLS_WHERE_ARG),
        .fill = row(lib, "dltensor_from_py_object_no_sync", DLS_ROLE_EXPORT, DLS_WHERE_FILL),
        .stream = row(lib, "current_work_stream", DLS_ROLE_EXPORT, DLS_WHERE_RET),
        .lib = lib,
    };
    const dls_dlpack_exchange_api *out = api;
    dls_mutex_lock(&g_lock);
    n = atomic_load_explicit(&g_n, memory_order_relaxed);
    for (int i = 0; i < n && out == api; i++)
        if (g_api[i].orig == api)
            out = &g_api[i].table;
    if (out == api && n < DLS_EXCHANGE_APIS && w.exp && w.imp && w.fill && w.stream) {
        g_api[n] = w;
        fill_slot(&g_api[n], n);
        atomic_store_explicit(&g_n, n + 1, memory_order_release);
        out = &g_api[n].table;
    }
    dls_mutex_unlock(&g_lock);
    if (out == api)
        dls_warn_once("exchange-apis", "more than %d DLPack exchange API tables; the one of %s is not traced",
                      DLS_EXCHANGE_APIS, lib);
    return out;
}
