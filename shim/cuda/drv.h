/* The shim's own CUDA driver calls: function pointers resolved from the libcuda already in the
 * process, each call made under a thread-local guard.
 *
 * Nothing here loads CUDA: the table is resolved with dlopen("libcuda.so.1", RTLD_NOLOAD), so in
 * a process without CUDA every call returns CUDA_ERROR_NOT_INITIALIZED and does nothing. While a
 * guarded call runs, dls_drv_in_shim() is true on that thread, and the CUPTI callback ignores
 * whatever the call reports: the shim's own event records and waits are never seen as user
 * operations (the policy updates its model for them directly). Every function is thread-safe. */
#ifndef DLS_DRV_H
#define DLS_DRV_H

#include "../common/compiler.h"
#include "cuda_api.h"

/* The driver entry points the shim uses, from drv.def (field names are not the cu* names on
 * purpose: cuda.h defines some of those as macros). Any pointer may be NULL when the driver
 * lacks it. */
typedef struct {
#define DRV(field, symbol, params, args) CUresult(*field) params;
#include "drv.def"
#undef DRV
} dls_drv_table;

/* The resolved table, or NULL while no libcuda is loaded in the process (retried on each call
 * until it is). */
const dls_drv_table *dls_drv(void) DLS_UNLOCKED;

/* 1 while the calling thread is inside one of the guarded calls below, else 0 (the depth of
 * guarded calls is kept in the thread's block, thread.h). */
int dls_drv_in_shim(void);

/* Guarded calls, one per row of drv.def: dls_drv_<field>(...) calls the cu* function the row
 * names and returns its result, or CUDA_ERROR_NOT_INITIALIZED when libcuda is not loaded or
 * lacks the entry point. Never called under a lock of the shim (DLS_UNLOCKED). */
#define DRV(field, symbol, params, args) CUresult dls_drv_##field params DLS_UNLOCKED;
#include "drv.def"
#undef DRV

/* Makes `ctx` current on the calling thread for the shim's next calls (cuCtxPushCurrent), unless
 * ctx is NULL or already current. An event must be created and recorded in the context of its
 * stream, and the legacy and per-thread handles name the current context's streams, so the shim
 * enters a stream's context before such calls. Returns CUDA_SUCCESS with *pushed = 1 when a
 * context was pushed (dls_drv_ctx_leave pops it), 0 when none was; or the driver's error, with
 * nothing pushed. Inside a delivery the callback's context tells what is current (thread.h), so
 * the driver is asked only outside one or after a push. */
CUresult dls_drv_ctx_enter(CUcontext ctx, int *pushed) DLS_UNLOCKED;

/* Undoes dls_drv_ctx_enter: pops the context it pushed, if it pushed one. */
void dls_drv_ctx_leave(int pushed) DLS_UNLOCKED;

/* Synchronizes the calling thread's current context and the primary context of every device
 * whose primary context is active (one the program uses; an inactive one is never created), for
 * the fallbacks that cannot tell on which device the producer's work is. Returns CUDA_SUCCESS
 * (also when there is no context at all) or the first error. */
CUresult dls_drv_synchronize_devices(void) DLS_UNLOCKED;

/* Tests only: use `t` instead of the libcuda table (NULL returns to normal resolution). */
void dls_drv_set_table_for_tests(const dls_drv_table *t);

#endif
