/* The parameters of cuptiSubscribe_v2 in every CUPTI 13 generation, declared once for the
 * observer and the simulator.
 *
 * CUpti_SubscriberParams is versioned by `structSize`: CUPTI reads only the fields it covers.
 * - CUPTI 13.0 and 13.1 (CUPTI_API_VERSION 130001, the CUDA 13.0 headers this project builds
 *   against; 130101) end the struct at `oldSubscriberSize`.
 * - CUPTI 13.2 (CUPTI_API_VERSION 130200; cupti_callbacks.h of PyPI's nvidia-cuda-cupti 13.2.23
 *   and 13.2.86, nvidia/cu13/include/) appends
 *       uint8_t allowMultipleSubscribers;   1: request multi-subscriber mode (marked beta)
 *       uint8_t padding[7];
 *   and sets CUpti_SubscriberParams_STRUCT_SIZE to CUPTI_CALLBACK_STRUCT_SIZE(..., padding).
 *   When the request cannot be fulfilled cuptiSubscribe_v2 still returns
 *   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED. 13.2 offers the field as a beta only: the
 *   request is fulfilled from CUPTI 13.3 on, with a driver of the r610 branch or newer (CUPTI's
 *   documentation, "Legacy Initialization (CUDA 13.2 and earlier)": with CUDA 13.2 or older, or
 *   a driver older than r610, CUPTI has a single subscriber).
 * The struct below is the 13.2 layout; `structSize` must be the size the loaded CUPTI knows
 * (dls_cupti_subscriber_params_size), never more: CUPTI 13.0 refuses a larger one with
 * CUPTI_ERROR_INVALID_PARAMETER (docs/gpu-results-2026-11-30.md). */
#ifndef DLS_CUPTI_SUBSCRIBER_H
#define DLS_CUPTI_SUBSCRIBER_H

#include <cupti_callbacks.h>
#include <stddef.h>
#include <stdint.h>

/* The first CUPTI_API_VERSION (cuptiGetVersion) whose struct has allowMultipleSubscribers. */
#define DLS_CUPTI_ALLOW_MULTIPLE_VERSION 130200u
/* The first CUPTI_API_VERSION that can fulfil the request, given a driver of the r610 branch or
 * newer (DLS_CUPTI_SHARING_DRIVER_BRANCH). */
#define DLS_CUPTI_SHARING_VERSION 130300u
/* The first driver (cuDriverGetVersion) that can: CUDA 13.3's, of the r610 branch. The documentation
 * names the branch only; that the r610 branch is the one that reports 13.3 is inferred from its
 * wording ("CUDA 13.2 or older, or drivers older than r610"), not measured. */
#define DLS_CUPTI_SHARING_DRIVER 13030

typedef struct {
    size_t structSize;
    const char *subscriberName;
    char *oldSubscriberName;
    size_t oldSubscriberSize;
    uint8_t allowMultipleSubscribers; /* CUPTI 13.2 and later */
    uint8_t padding[7];
} dls_cupti_subscriber_params;

/* The fields shared with the CUpti_SubscriberParams of the headers in use sit where they do. */
_Static_assert(offsetof(dls_cupti_subscriber_params, oldSubscriberSize) ==
                   offsetof(CUpti_SubscriberParams, oldSubscriberSize),
               "CUpti_SubscriberParams layout changed");

/* structSize of the layout before CUPTI 13.2 and of the 13.2 layout. */
#define DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_BASE CUPTI_CALLBACK_STRUCT_SIZE(dls_cupti_subscriber_params, oldSubscriberSize)
#define DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI CUPTI_CALLBACK_STRUCT_SIZE(dls_cupti_subscriber_params, padding)

/* 1 when the struct of a CUPTI reporting API version `version` has allowMultipleSubscribers. */
static inline int dls_cupti_has_allow_multiple(uint32_t version)
{
    return version >= DLS_CUPTI_ALLOW_MULTIPLE_VERSION;
}

/* 1 when a CUPTI reporting API version `version` can share (with an r610+ driver). */
static inline int dls_cupti_can_share(uint32_t version)
{
    return version >= DLS_CUPTI_SHARING_VERSION;
}

/* 1 when a driver reporting `driver` (cuDriverGetVersion) lets CUPTI share. */
static inline int dls_cupti_driver_can_share(int driver)
{
    return driver >= DLS_CUPTI_SHARING_DRIVER;
}

/* The structSize to give a CUPTI reporting API version `version`. */
static inline size_t dls_cupti_subscriber_params_size(uint32_t version)
{
    return dls_cupti_has_allow_multiple(version) ? DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI
                                                 : DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_BASE;
}

#endif
