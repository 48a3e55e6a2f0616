/* A fake NVTX tool for the tests: loaded through NVTX_INJECTION64_PATH, it takes over domain
 * creation, markers and push/pop ranges and appends one line per call to the file named by
 * DLS_FAKE_NVTX_OUT ("domain NAME", "mark DOMAIN MESSAGE", "push DOMAIN MESSAGE",
 * "pop DOMAIN"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#define MAX_DOMAINS 8

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_names[MAX_DOMAINS][64];
static int g_ndomains;

static void record(const char *fmt, const char *a, const char *b)
{
    const char *path = getenv("DLS_FAKE_NVTX_OUT");
    if (!path)
        return;
    pthread_mutex_lock(&g_lock);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, fmt, a, b);
        fclose(f);
    }
    pthread_mutex_unlock(&g_lock);
}

static const char *domain_name(nvtxDomainHandle_t d)
{
    return d ? (const char *)d : "(null)";
}

static const char *message(const nvtxEventAttributes_t *a)
{
    return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii ? a->message.ascii : "(none)";
}

static nvtxDomainHandle_t fake_domain_create(const char *name)
{
    pthread_mutex_lock(&g_lock);
    char *slot = NULL;
    if (g_ndomains < MAX_DOMAINS) {
        slot = g_names[g_ndomains++];
        snprintf(slot, sizeof g_names[0], "%s", name ? name : "(null)");
    }
    pthread_mutex_unlock(&g_lock);
    record("domain %s%s\n", slot ? slot : "(full)", "");
    return (nvtxDomainHandle_t)slot;
}

static void fake_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    record("mark %s %s\n", domain_name(d), message(a));
}

static int fake_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    record("push %s %s\n", domain_name(d), message(a));
    return 0;
}

static int fake_pop(nvtxDomainHandle_t d)
{
    record("pop %s%s\n", domain_name(d), "");
    return 0;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || size < NVTX_CBID_CORE2_DomainCreateA)
        return 0;
    *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)fake_domain_create;
    *table[NVTX_CBID_CORE2_DomainMarkEx] = (NvtxFunctionPointer)fake_mark;
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)fake_push;
    *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)fake_pop;
    return 1;
}
