/* dlsync configuration: every DLSYNC_* environment variable, read once.
 *
 * The values are read with secure_getenv on first use (thread-safe, once per process) and never
 * change afterwards. A bad value falls back to the default and is described in `problems`, which
 * the shim's start-up prints as warnings (this module writes nothing); nothing here can fail or
 * abort. The README's environment table documents each field. */
#ifndef DLS_CONFIG_H
#define DLS_CONFIG_H

#include "compiler.h"
#include "export.h"

#include "names.h"

#include <stdatomic.h>
#include <stdint.h>

typedef enum {
#define DLS_MODE_ENUM_(id, name) DLS_MODE_##id,
    DLS_MODES(DLS_MODE_ENUM_)
#undef DLS_MODE_ENUM_
} dls_mode;

/* DLSYNC_STACK: which frames a report's stacks show. */
typedef enum {
    DLS_STACK_BOTH = 0, /* native frames down to the Python interpreter, then the Python frames */
    DLS_STACK_NATIVE,   /* native frames only (no Python frame is captured) */
    DLS_STACK_PYTHON,   /* Python frames only (native ones where the thread ran no Python) */
} dls_stack_kind;

#define DLS_CONFIG_PROBLEMS 8 /* bad values remembered (one per variable that can be bad) */

typedef struct {
    dls_mode mode;                 /* DLSYNC_MODE: off|trace|check|fix (default fix) */
    const char *log_path;          /* DLSYNC_LOG: JSON-lines log path, %p = pid, %r = rank; NULL = none */
    int verbose;                   /* DLSYNC_VERBOSE: 1 = one-line summary on stderr at exit */
    const char *cupti_path;        /* DLSYNC_CUPTI: CUPTI library to load instead of searching; NULL = search */
    const char *profiles_path;     /* DLSYNC_PROFILES: extra profile rows file; NULL = built-ins only */
    int debug_ops;                 /* DLSYNC_DEBUG_OPS: 1 = one stderr line per observed CUDA operation */
    dls_stack_kind stack;          /* DLSYNC_STACK: native|python|both (default both) */
    int quiet;                     /* DLSYNC_QUIET: 1 = no summary line at exit (check, and fix when it acted) */
    const char *suppressions_path; /* DLSYNC_SUPPRESSIONS: race suppressions file; NULL = none */
    uint64_t log_limit;            /* DLSYNC_LOG_LIMIT: bytes past which no exchange records are logged; 0 = none */
    const char *run_id;            /* DLSYNC_RUN_ID: the run's identity; NULL = none given (report/run.h makes one) */
    const char *run_manifest;      /* DLSYNC_RUN_MANIFEST: absolute path of the run's manifest; NULL = none */
    int inert;                     /* 1: dlsync was not asked for in this process (dls_config_make_inert) */
    unsigned nproblems;            /* bad values, each "DLSYNC_X=value is not ...; using ..." */
    char problems[DLS_CONFIG_PROBLEMS][160];
} dls_config;

/* The configuration once read (written by config.c only); NULL until then. */
extern const dls_config *_Atomic dls_config_read DLS_HIDDEN;

/* dls_config_get before the configuration was read: reads the environment (once). */
const dls_config *dls_config_get_first(void);

/* Returns the process configuration, reading the environment on the first call. Never NULL.
 * Once read, one inline load. */
static inline const dls_config *dls_config_get(void)
{
    const dls_config *c = atomic_load_explicit(&dls_config_read, memory_order_acquire);
    return DLS_LIKELY(c != NULL) ? c : dls_config_get_first();
}

/* Name of a mode as written in DLSYNC_MODE ("off", "trace", "check", "fix"). */
const char *dls_mode_name(dls_mode m);

/* Makes the configuration that of DLSYNC_MODE=off with `inert` set, whatever the environment
 * says: the shim arrived in a process that did not ask for it. Call once, from the shim's start-up,
 * before any other thread may read the configuration. */
void dls_config_make_inert(void);

/* Tests only: forget the cached configuration so the next dls_config_get re-reads the
 * environment. Not thread-safe; call only while no other thread uses the configuration. */
void dls_config_reset_for_tests(void);

#endif
