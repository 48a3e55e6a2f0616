/* The CUPTI callback ids the observer enables, one by one, and their classes (see cbids.h), from
 * the rows of calls.def: driver ids, every call the decoders handle and the calls that
 * invalidate cached state; runtime ids, the runtime calls whose names annotate the driver
 * operations beneath them. A row listed twice is an error (-Woverride-init). */
#include "cbids.h"

#define CALL(name, class) CUPTI_DRIVER_TRACE_CBID_##name,
static const CUpti_CallbackId g_driver[] = {
#include "calls.def"
};

#define CALL(name, class) [CUPTI_DRIVER_TRACE_CBID_##name] = DLS_CBID_##class,
const unsigned char dls_cuda_cbid_classes[CUPTI_DRIVER_TRACE_CBID_SIZE] = {
#include "calls.def"
};

#define RUNTIME(name) CUPTI_RUNTIME_TRACE_CBID_##name,
static const CUpti_CallbackId g_runtime[] = {
#include "calls.def"
};

const CUpti_CallbackId *dls_cuda_driver_cbids(size_t *n)
{
    *n = sizeof g_driver / sizeof g_driver[0];
    return g_driver;
}

const CUpti_CallbackId *dls_cuda_runtime_cbids(size_t *n)
{
    *n = sizeof g_runtime / sizeof g_runtime[0];
    return g_runtime;
}
