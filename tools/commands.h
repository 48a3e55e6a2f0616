/* The subcommands of the dlsync command and their shared conventions.
 *
 * Each takes the arguments after its name (argv[0] is the subcommand name) and returns the
 * process exit status. Exit statuses of the command's own failures: */
#ifndef DLS_TOOL_COMMANDS_H
#define DLS_TOOL_COMMANDS_H

#define DLS_EXIT_USAGE 2      /* bad command line */
#define DLS_EXIT_RACE 3       /* run --fail-on-race: the program succeeded but races were logged */
#define DLS_EXIT_INTERNAL 125 /* run: dlsync itself failed before starting the program */
#define DLS_EXIT_NOEXEC 126   /* run: the program was found but could not be executed */
#define DLS_EXIT_NOTFOUND 127 /* run: the program was not found */

/* The full help text (the same as the man page's synopsis and options). */
extern const char dls_usage_text[];

/* dlsync run [options] -- PROGRAM [ARGS...]: runs PROGRAM with libdlsync.so preloaded. The
 * status is the program's (128+signal when it was killed), or one of the DLS_EXIT_* above. */
int dls_cmd_run(int argc, char **argv);

/* dlsync scan FILE...: lists the DLPack-related symbols of ELF objects. 0 when every file was
 * read, 1 when some could not be, DLS_EXIT_USAGE for a bad command line. */
int dls_cmd_scan(int argc, char **argv);

/* dlsync report [--chrome-trace OUT.json] LOG...: summarizes logs. 0 when every log was read
 * (damaged lines are skipped with a message), 1 when a log or the output could not be
 * opened or written, DLS_EXIT_USAGE for a bad command line. */
int dls_cmd_report(int argc, char **argv);

#endif
