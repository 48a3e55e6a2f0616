/* NVTX marks in the "dlsync" domain (see nvtx.h). */
#include "nvtx.h"

#include <pthread.h>
#include <stdatomic.h>

#include <nvtx3/nvToolsExt.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static nvtxDomainHandle_t g_domain; /* NULL when no NVTX tool is injected */
atomic_int dls_nvtx_absent;

static void create_domain(void)
{
    g_domain = nvtxDomainCreateA("dlsync");
    if (!g_domain)
        atomic_store_explicit(&dls_nvtx_absent, 1, memory_order_relaxed);
}

static nvtxDomainHandle_t domain(void)
{
    if (atomic_load_explicit(&dls_nvtx_absent, memory_order_relaxed))
        return NULL;
    pthread_once(&g_once, create_domain);
    return g_domain;
}

static nvtxEventAttributes_t attributes(const char *message)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message ? message : "";
    return a;
}

int dls_nvtx_active_slow(void)
{
    return domain() != NULL;
}

void dls_nvtx_mark(const char *message)
{
    nvtxDomainHandle_t d = domain();
    if (!d)
        return;
    nvtxEventAttributes_t a = attributes(message);
    nvtxDomainMarkEx(d, &a);
}

void dls_nvtx_range_push(const char *message)
{
    nvtxDomainHandle_t d = domain();
    if (!d)
        return;
    nvtxEventAttributes_t a = attributes(message);
    nvtxDomainRangePushEx(d, &a);
}

void dls_nvtx_range_pop(void)
{
    nvtxDomainHandle_t d = domain();
    if (d)
        nvtxDomainRangePop(d);
}
