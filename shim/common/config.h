/* dlsync configuration: every DLSYNC_* environment variable, read once.
 *
 * The values are read with secure_getenv on first use (thread-safe, once per process) and never
 * change afterwards. A bad value prints one warning and falls back to the default; nothing here
 * can fail or abort. The README's environment table documents each field. */
#ifndef DLS_CONFIG_H
#define DLS_CONFIG_H

typedef enum {
    DLS_MODE_OFF = 0, /* wrappers pass straight through, nothing recorded */
    DLS_MODE_TRACE,   /* record exchanges only */
    DLS_MODE_CHECK,   /* record and report unsynchronized uses; never change ordering */
    DLS_MODE_FIX,     /* default: make every exchanged tensor safe on its consumer stream */
} dls_mode;

typedef struct {
    dls_mode mode;             /* DLSYNC_MODE: off|trace|check|fix (default fix) */
    const char *log_path;      /* DLSYNC_LOG: JSON-lines log path, %p = pid, %r = rank; NULL = none */
    int verbose;               /* DLSYNC_VERBOSE: 1 = one-line summary on stderr at exit */
    const char *cupti_path;    /* DLSYNC_CUPTI: CUPTI library to load instead of searching; NULL = search */
    const char *profiles_path; /* DLSYNC_PROFILES: extra profile rows file; NULL = built-ins only */
    int debug_ops;             /* DLSYNC_DEBUG_OPS: 1 = one stderr line per observed CUDA operation */
} dls_config;

/* Returns the process configuration, reading the environment on the first call. Never NULL. */
const dls_config *dls_config_get(void);

/* Name of a mode as written in DLSYNC_MODE ("off", "trace", "check", "fix"). */
const char *dls_mode_name(dls_mode m);

/* Tests only: forget the cached configuration so the next dls_config_get re-reads the
 * environment. Not thread-safe; call only while no other thread uses the configuration. */
void dls_config_reset_for_tests(void);

#endif
