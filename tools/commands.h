/* The subcommands of the dlsync command and their shared conventions.
 *
 * Each takes the arguments after its name (argv[0] is the subcommand name) and returns the
 * process exit status; the statuses of the command's own failures are DLS_EXIT_* in
 * common/names.h, shared with the shim. */
#ifndef DLT_COMMANDS_H
#define DLT_COMMANDS_H

#include "common/names.h"

#include <stdio.h>

/* The help of each subcommand (`dlsync SUBCOMMAND --help`), and all of it with the synopsis
 * (`dlsync --help`); the man page says the same. */
extern const char dlt_usage_run[], dlt_usage_scan[], dlt_usage_report[], dlt_usage_text[];

/* Writes the DLSYNC_* variables to out, each with its values, default and meaning (the rows of
 * common/options.def), as `dlsync --help` and `dlsync run --help` end. */
void dlt_usage_variables(FILE *out);

/* dlsync run [options] -- PROGRAM [ARGS...]: runs PROGRAM with libdlsync.so preloaded and waits
 * for it. The status is the program's (128+signal when it was killed), or one of the DLS_EXIT_*:
 * with --fail-on-race, DLS_EXIT_RACE (or --error-exitcode's) when a race was reported and the
 * program exited 0, DLS_EXIT_UNCHECKED when none was but the run could not all be checked. */
int dlt_cmd_run(int argc, char **argv);

/* dlsync scan FILE...: lists the DLPack-related symbols of ELF objects. 0 when every file was
 * read and the listing written, 1 when a file could not be read (a truncated or corrupt ELF
 * object, no ELF object, a directory, a FIFO: one line each) or the output could not be written,
 * DLS_EXIT_USAGE for a bad command line. */
int dlt_cmd_scan(int argc, char **argv);

/* dlsync report [--chrome-trace OUT.json] [--json] LOG...: summarizes logs (report_opts.h for
 * the command line). 0 when every log was read (damaged lines are skipped with a message), 1
 * when a log could not be opened, was refused or was no dlsync log, or the output could not be
 * written, DLS_EXIT_USAGE for a bad command line or an output it refuses to write over. */
int dlt_cmd_report(int argc, char **argv);

#endif
