/* dlsync.h — the C stream exchange for legacy DLPack producers (libdlsync.so).
 *
 * DLPack never specified how a C consumer asks a producer for a tensor that is safe to use on
 * the consumer's stream (dlpack issue #65). With libdlsync.so loaded (preloaded, or linked),
 * these functions give that exchange to producers that only have a legacy to_dlpack: the shim
 * calls the producer's native export, observes the CUDA work that wrote the tensor, and makes
 * the consumer's stream wait for it (an event record and a stream wait, only where missing).
 *
 * Streams (`intptr_t stream`) use the Python array API encoding of __dlpack__(stream=...):
 *   -1                      no ordering is made now (the consumer synchronizes itself)
 *    1                      the legacy default stream (cudaStreamLegacy)
 *    2                      the per-thread default stream (cudaStreamPerThread)
 *   other positive values   a cudaStream_t / CUstream handle, cast to intptr_t
 *    0                      ambiguous: rejected with DLSYNC_ERR_STREAM_ZERO
 * Any other negative value, or a handle the CUDA driver does not know, is DLSYNC_ERR_STREAM.
 *
 * Producers are named by framework ("pytorch", "tvm", "tvm-ffi", "mxnet", or a framework of a
 * DLSYNC_PROFILES row) or by the exact exported symbol of a profiled export
 * ("MXNDArrayToDLPack", "_ZN2at8toDLPackERKNS_6TensorE"). A framework name picks its versioned
 * export when that function is loaded, else its unversioned one. The export is called as
 * `tensor = f(object)` (rows whose tensor is the return value) or `status = f(object, &tensor)`
 * (rows with an out-parameter in the second argument, status 0 on success); an export that takes
 * other arguments (TensorFlow's TF_Status*) is refused with DLSYNC_ERR_UNSUPPORTED: call it
 * yourself and use dlsync_make_safe*. For PyTorch, `object` is an at::Tensor* (the export takes
 * a const at::Tensor&); for the C APIs it is the framework's array handle. The export must not
 * throw a C++ exception.
 *
 * Mode: in the default mode (DLSYNC_MODE=fix) and in check mode the ordering is made from the
 * shim's model of the producer's stream work. In trace and off modes there is no model, and the
 * ordering falls back to synchronizing the calling thread's current CUDA context. Without a
 * CUPTI observer the same fallback applies (one warning names the reason).
 *
 * Every function returns a dlsync_status (0 on success) unless said otherwise, is thread-safe,
 * never initializes CUDA, never changes tensor data, and never ends the process.
 *
 * Calling these when libdlsync.so may be absent: look the functions up at run time and fall
 * back to your own synchronization when they are missing, for example
 *
 *     #include <dlfcn.h>
 *     #include <dlsync.h>
 *
 *     dlsync_to_dlpack_fn to_dlpack = (dlsync_to_dlpack_fn)dlsym(RTLD_DEFAULT, "dlsync_to_dlpack");
 *     DLManagedTensorVersioned *t = NULL;
 *     if (to_dlpack && to_dlpack("mxnet", handle, (intptr_t)my_stream, &t) == DLSYNC_OK) {
 *         launch_consumer(t, my_stream);               // safe on my_stream
 *         t->deleter(t);
 *     } else {
 *         // no dlsync: the legacy export, then cudaDeviceSynchronize() before using it
 *     }
 *
 * or declare the functions weak in one translation unit, `#pragma weak dlsync_to_dlpack`, and
 * test `if (dlsync_to_dlpack)` before each call (link without -ldlsync). */
#ifndef DLSYNC_H
#define DLSYNC_H

#include "dlsync_dlpack.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Stream values of the array API encoding (see above). */
#define DLSYNC_STREAM_NO_SYNC ((intptr_t)-1)
#define DLSYNC_STREAM_LEGACY ((intptr_t)1)
#define DLSYNC_STREAM_PER_THREAD ((intptr_t)2)

/* The DLPack version written into versioned tensors made from unversioned (0.x) ones. */
#define DLSYNC_DLPACK_MAJOR 1
#define DLSYNC_DLPACK_MINOR 0

typedef enum {
    DLSYNC_OK = 0,
    DLSYNC_ERR_ARGUMENT = 1,    /* a required pointer is NULL, or an argument is out of range */
    DLSYNC_ERR_STREAM_ZERO = 2, /* stream 0: ambiguous in the array API, pass 1 or 2 instead */
    DLSYNC_ERR_STREAM = 3,      /* not a stream value of the encoding, or an unknown handle */
    DLSYNC_ERR_NO_PRODUCER = 4, /* no profiled export of that name, or its library is not loaded */
    DLSYNC_ERR_UNSUPPORTED = 5, /* the producer's export needs arguments dlsync cannot supply */
    DLSYNC_ERR_PRODUCER = 6,    /* the producer's export failed (error status or no tensor) */
    DLSYNC_ERR_VERSION = 7,     /* a versioned tensor whose major version is not 1 */
    DLSYNC_ERR_TENSOR = 8,      /* a tensor dlsync cannot interpret (bad ndim, shape, dtype...) */
    DLSYNC_ERR_CUDA = 9,        /* a CUDA call needed for the ordering failed */
    DLSYNC_ERR_MEMORY = 10,     /* out of memory */
    DLSYNC_ERR_NOT_FOUND = 11,  /* no such record (query API: never made, or no longer kept) */
} dlsync_status;

/* A constant, human-readable description of `status` ("unknown dlsync status" for a value not
 * in dlsync_status). Never NULL. */
const char *dlsync_status_string(int status);

/* leofang's form. Calls the export of `producer` on `object` and stores in *out a versioned
 * tensor whose data is safe to use on `stream`: work the producer issued on the tensor before
 * the export is ordered before any work the caller enqueues on `stream` afterwards.
 * A versioned export's tensor is returned as it is (version and flags preserved). An unversioned
 * (0.x) tensor is wrapped into a new versioned one (version DLSYNC_DLPACK_MAJOR.MINOR, flags 0,
 * the same dl_tensor, whose shape and strides point into the producer's tensor); the wrapper's
 * deleter calls the producer's deleter exactly once and frees the wrapper.
 * The caller owns *out and must call (*out)->deleter(*out) once when done with the data.
 * On failure *out is left unchanged and a tensor the producer handed out is released.
 * Errors: ARGUMENT (producer, object or out NULL), STREAM_ZERO, STREAM, NO_PRODUCER,
 * UNSUPPORTED, PRODUCER, VERSION, TENSOR, CUDA, MEMORY. */
int dlsync_to_dlpack(const char *producer, void *object, intptr_t stream, DLManagedTensorVersioned **out);

/* seberg's form. Like dlsync_to_dlpack, but fills the consumer's own struct `tensor` instead of
 * returning one: the struct's storage and lifetime are the caller's; only the data's lifetime is
 * the producer's. On success every field of *tensor is written: version (the producer's for a
 * versioned export, else DLSYNC_DLPACK_MAJOR.MINOR), flags (the producer's, else 0), dl_tensor,
 * manager_ctx (the producer's tensor) and deleter. dl_tensor.shape and .strides point into the
 * producer's tensor: they stay valid until the deleter is called; copy them to keep them longer.
 * Call tensor->deleter(tensor) once when done with the data: it releases the producer's tensor
 * (its deleter runs exactly once; a second call does nothing) and never frees `tensor`.
 * On failure *tensor is left unchanged. Errors as for dlsync_to_dlpack. */
int dlsync_to_dlpack_into(const char *producer, void *object, intptr_t stream, DLManagedTensorVersioned *tensor);

/* The __dlpack_device__ analogue: stores in *device the device of the tensor `producer` would
 * export for `object`. Legacy producers have no device query, so this calls the export and
 * releases the tensor at once: no ordering is made and nothing is recorded as an exchange.
 * Errors: ARGUMENT, NO_PRODUCER, UNSUPPORTED, PRODUCER, VERSION. *device is unchanged on error. */
int dlsync_device(const char *producer, void *object, DLDevice *device);

/* Makes a versioned tensor obtained any other way (a producer dlsync does not wrap, a tensor
 * exported earlier) safe to use on `stream`. A tensor the shim has not seen is registered as an
 * exchange first: its deleter field is replaced by the shim's, which calls the original exactly
 * once; nothing else in the struct changes. Stream -1 does nothing.
 * Errors: ARGUMENT (tensor NULL), STREAM_ZERO, STREAM, VERSION, TENSOR, CUDA. */
int dlsync_make_safe(DLManagedTensorVersioned *tensor, intptr_t stream);

/* The same for an unversioned (DLPack 0.x) DLManagedTensor. The two kinds cannot be told apart
 * from the pointer, so each has its own function. Errors as for dlsync_make_safe, less VERSION. */
int dlsync_make_safe_unversioned(DLManagedTensor *tensor, intptr_t stream);

/* Exactly DLPack 1.3's DLPackCurrentWorkStream (usable as DLPackExchangeAPI.current_work_stream):
 * stores in *out_current_stream the stream the calling thread's legacy producer last used on
 * device (`device_type`, `device_id`), as observed at this thread's exports of tensors of that
 * device (kDLCUDA, kDLCUDAHost, kDLCUDAManaged); cudaStreamLegacy when none was observed yet
 * (the array API default), NULL for kDLCPU. Returns 0 on success, -1 when out_current_stream is
 * NULL, device_id is negative or the device type has no CUDA streams. */
int dlsync_current_work_stream(DLDeviceType device_type, int32_t device_id, void **out_current_stream);

/* Sets the calling thread's consumer stream: every later export this thread makes through a
 * wrapped legacy to_dlpack (the program calling MXNDArrayToDLPack, at::toDLPack, ...) is made
 * safe on `stream` at once, in fix mode. Stream -1 clears it. Errors: STREAM_ZERO, STREAM. */
int dlsync_set_consumer_stream(intptr_t stream);

/* Clears the calling thread's consumer stream (exports are then ordered at first use, in fix
 * mode). Cannot fail. */
void dlsync_clear_consumer_stream(void);

/* ---- The query API: what the shim did in this process so far ----
 *
 * Versioned: every structure begins with `size`, which the caller sets to the sizeof the
 * structure it was compiled with; the shim fills the fields that fit in that size (a later
 * version only appends fields) and rejects a size below version 1's with DLSYNC_ERR_ARGUMENT.
 * dlsync_query_version() says which version the loaded shim has. These functions never
 * initialize CUDA, take no lock across a CUDA call, and are cheap enough to call per test. The
 * Python module `dlsync` is built on them. */
#define DLSYNC_QUERY_VERSION 1

/* The version of the query API of the loaded shim (DLSYNC_QUERY_VERSION it was built with). */
int dlsync_query_version(void);

typedef struct {
    uint32_t size;                                  /* in: sizeof(dlsync_state_info) */
    uint32_t version;                               /* the shim's DLSYNC_QUERY_VERSION */
    const char *shim_version;                       /* the shim's release ("0.9.0") */
    const char *mode;                               /* "fix", "check", "trace" or "off" (DLSYNC_MODE) */
    const char *cupti;                              /* "shared", "exclusive" or "none": how CUDA is observed */
    const char *stack;                              /* "both", "native" or "python" (DLSYNC_STACK) */
    int recording;                                  /* 1 once dlsync_record_exchanges started keeping exchanges */
    uint64_t exchanges, exports, imports, releases; /* counted since start, as the exit summary */
    uint64_t ops, races, injected, fallbacks;       /* races: distinct hazards reported */
    uint64_t race_reports;                          /* reports dlsync_race can give: indexes 0 .. race_reports-1 */
    uint64_t injections; /* injected orderings made: dlsync_injection numbers 1 .. injections */
} dlsync_state_info;

/* Fills *info with the shim's state (strings are constants). Errors: ARGUMENT. */
int dlsync_state(dlsync_state_info *info);

typedef struct {
    uint32_t size;    /* in: sizeof(dlsync_race_info) */
    uint32_t count;   /* times this hazard was seen so far (the report is written once) */
    uint64_t xid;     /* the exchange */
    const char *kind; /* "write-read", "read-write", "write-write", "host-read", "release-reuse", "write-after-use",
                         "use-after-write", "use-after-release", "kernel-pair", "free-during-use" */
    const char *framework, *symbol;        /* the producer's framework and entry point */
    const char *producer_op, *consumer_op; /* the two operations (NULL when unknown) */
    const char *producer_stack;            /* frames, one per line, innermost first */
    const char *consumer_stack;
    const char *fix;  /* the report's fix line */
    const char *text; /* the whole report, exactly as written on stderr */
} dlsync_race_info;

/* Fills *info with the index-th race report written (from 0, in the order written; a report
 * whose consumer released the GIL is written when the thread takes it back, with its Python
 * frames). The strings stay valid for the life of the process. At most 256 reports are kept.
 * Errors: ARGUMENT, NOT_FOUND. */
int dlsync_race(uint64_t index, dlsync_race_info *info);

/* Starts (on = 1) or stops (0) keeping the exchanges dlsync_exchange gives (the last 4,096 by
 * id; off until started, since it copies each exchange). Errors: UNSUPPORTED with
 * DLSYNC_MODE=off. */
int dlsync_record_exchanges(int on);

typedef struct {
    uint32_t size;    /* in: sizeof(dlsync_exchange_info) */
    uint32_t imports; /* wrapped imports of the tensor */
    uint64_t xid;
    int32_t released; /* 1 once its deleter was called */
    int32_t device_id;
    int32_t ndim; /* shape holds the first 8 dimensions */
    int32_t reserved;
    char producer[32], producer_symbol[96]; /* "" when the tensor came from no wrapped export */
    char consumer[32], consumer_symbol[96]; /* "" until imported */
    char device[16];                        /* "cuda", "cpu", ... */
    char dtype[24];                         /* "float32", ... */
    int64_t shape[8];
} dlsync_exchange_info;

/* Copies exchange `xid` into *info. Errors: ARGUMENT, NOT_FOUND (not recorded: before
 * dlsync_record_exchanges, or one of the oldest). */
int dlsync_exchange(uint64_t xid, dlsync_exchange_info *info);

typedef struct {
    uint32_t size; /* in: sizeof(dlsync_injection_info) */
    uint32_t reserved;
    uint64_t number;      /* from 1, in the order made */
    uint64_t xid;         /* the exchange it ordered */
    uint64_t from_stream; /* dlsync's id of the stream waited for (0: none) */
    uint64_t to_stream;   /* of the stream made to wait (0: the host waited) */
    char what[24];        /* "event-wait", "host-wait", "context-sync", ... */
    char reason[128];
} dlsync_injection_info;

/* Copies injected ordering `number` (1 .. dlsync_state_info.injections) into *info; the last
 * 1,024 are kept. Errors: ARGUMENT, NOT_FOUND. */
int dlsync_injection(uint64_t number, dlsync_injection_info *info);

/* Function pointer types, for dlsym(RTLD_DEFAULT, "dlsync_...") lookups. */
typedef const char *(*dlsync_status_string_fn)(int);
typedef int (*dlsync_to_dlpack_fn)(const char *, void *, intptr_t, DLManagedTensorVersioned **);
typedef int (*dlsync_to_dlpack_into_fn)(const char *, void *, intptr_t, DLManagedTensorVersioned *);
typedef int (*dlsync_device_fn)(const char *, void *, DLDevice *);
typedef int (*dlsync_make_safe_fn)(DLManagedTensorVersioned *, intptr_t);
typedef int (*dlsync_make_safe_unversioned_fn)(DLManagedTensor *, intptr_t);
typedef int (*dlsync_current_work_stream_fn)(DLDeviceType, int32_t, void **);
typedef int (*dlsync_set_consumer_stream_fn)(intptr_t);
typedef void (*dlsync_clear_consumer_stream_fn)(void);
typedef int (*dlsync_query_version_fn)(void);
typedef int (*dlsync_state_fn)(dlsync_state_info *);
typedef int (*dlsync_race_fn)(uint64_t, dlsync_race_info *);
typedef int (*dlsync_record_exchanges_fn)(int);
typedef int (*dlsync_exchange_fn)(uint64_t, dlsync_exchange_info *);
typedef int (*dlsync_injection_fn)(uint64_t, dlsync_injection_info *);

#ifdef __cplusplus
}
#endif

#endif
