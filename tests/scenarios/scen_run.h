/* Running one scenario program for the scenario tests: with or without the shim, in a mode,
 * with a JSON-lines log captured (see dls_test.h for the subprocess runner). */
#ifndef SCEN_RUN_H
#define SCEN_RUN_H

#include "dls_test.h"

/* What one run produced: exit status, stdout, stderr (dls_run_result) and the log ("" when
 * none was written). Free with scen_run_free. */
typedef struct {
    dls_run_result r;
    char *log;
} scen_outcome;

/* Runs $(B)/scenarios/scen_<name> <variant>. `mode` NULL: without the shim; else preloaded with
 * DLSYNC_MODE=mode and a fresh DLSYNC_LOG. `extra` adds NULL-terminated NAME=value settings.
 * Returns 0, or -1 when the program could not be started. */
int scen_run(const char *name, const char *variant, const char *mode, const char *const *extra, scen_outcome *o);

void scen_run_free(scen_outcome *o);

/* Number of log records of kind ev ("race", "inject", ...) in o's log. */
int scen_records(const scen_outcome *o, const char *ev);

/* Every scenario's name, NULL-terminated. */
extern const char *const scen_names[];

#endif
