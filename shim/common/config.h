/* dlsync configuration: the DLSYNC_* settings of options.def, read once.
 *
 * The values are read with secure_getenv on first use (thread-safe, once per process) and never
 * change afterwards. A bad value falls back to the row's default and is described in `problems`,
 * which the shim's start-up prints as warnings (this module writes nothing); nothing here can
 * fail or abort. The variables dlsync sets for itself (options.def's DLS_PASSED rows) are read
 * when used, through dls_config_passed. */
#ifndef DLS_CONFIG_H
#define DLS_CONFIG_H

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

/* The C type of each kind of setting (options.def; config.c reads each kind). */
#define DLS_OPTION_TYPE_flag int
#define DLS_OPTION_TYPE_text const char *
#define DLS_OPTION_TYPE_absolute const char *
#define DLS_OPTION_TYPE_size uint64_t
#define DLS_OPTION_TYPE_mode dls_mode
#define DLS_OPTION_TYPE_stack dls_stack_kind
#define DLS_OPTION_TYPE_run_id const char *

/* DLS_CONFIG_PROBLEMS: room for one bad value per setting. */
enum {
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning) DLS_CONFIG_ROW_##NAME,
#include "options.def"
    DLS_CONFIG_PROBLEMS
};

typedef struct {
/* One member per DLS_OPTION row (`field`, of its kind's type), its default `init` when unset. */
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning) DLS_OPTION_TYPE_##kind field;
#include "options.def"
    unsigned nproblems; /* bad values, each "DLSYNC_<NAME>=value is not ...; using ..." */
    char problems[DLS_CONFIG_PROBLEMS][160];
} dls_config;

/* The DLS_PASSED rows of options.def: DLS_PASSED_<NAME>. */
typedef enum {
#define DLS_PASSED(NAME, reader, values, shown, meaning) DLS_PASSED_##NAME,
#include "options.def"
} dls_passed;

/* The configuration once read (written by config.c only); NULL until then. */
extern const dls_config *_Atomic dls_config_read DLS_HIDDEN;

/* dls_config_get before the configuration was read: reads the environment (once). */
const dls_config *dls_config_get_first(void);

/* Returns the process configuration, reading the environment on the first call. Never NULL.
 * Once read, one inline load. */
static inline const dls_config *dls_config_get(void)
{
    const dls_config *c = atomic_load_explicit(&dls_config_read, memory_order_acquire);
    return c ? c : dls_config_get_first();
}

/* The value of the variable of DLS_PASSED row v as the process's environment holds it now (dlsync
 * changes these while it runs, so they are not read once): NULL when unset or empty. Read with
 * getenv, not secure_getenv: a set-user-ID child that inherited dlsync's injection marker still
 * recognizes it and stays inert. */
const char *dls_config_passed(dls_passed v);

/* Name of a mode as written in DLSYNC_MODE ("off", "trace", "check", "fix"). */
const char *dls_mode_name(dls_mode m);

/* Makes the configuration that of DLSYNC_MODE=off, whatever the environment
 * says: the shim arrived in a process that did not ask for it. Call once, from the shim's start-up,
 * before any other thread may read the configuration. */
void dls_config_make_inert(void);

/* Tests only: forget the cached configuration so the next dls_config_get re-reads the
 * environment. Not thread-safe; call only while no other thread uses the configuration. */
void dls_config_reset_for_tests(void);

#endif
