/* What a finished `dlsync run` checked: read from the run's manifest (report/run.h in the shim)
 * and from the logs it names, and nothing else.
 *
 * A process is one pid with one start time (the images an exec chain runs in it are one
 * process). It was covered when dlsync ran in it up to its end: its last manifest line is its
 * `end` line, no log of it failed, its log can be read back (a regular file holding its start
 * record), and in check mode its end says it was checked. The program the run started is
 * expected among them; when it is not, the reason the run found before starting it (a static or
 * set-user-ID program) or else "dlsync did not start in it" is given. Races are those of the
 * `end` lines or, for a process without one, the race records of its log; suppressed races are
 * counted apart. Logs are opened only when they are regular files; a log's records count only
 * for the processes whose start records there name this run. */
#ifndef DLT_GATE_H
#define DLT_GATE_H

#include <stdio.h>
#include <sys/types.h>

#define DLT_GATE_REASONS 10 /* processes not covered that are named one by one */

typedef struct {
    long long processes; /* processes of the run (the program's included when it never registered) */
    long long uncovered; /* of those, the ones not covered */
    long long races, suppressed, exchanges, injected, fallbacks;
    char *reasons[DLT_GATE_REASONS]; /* "pid P (exe): why", malloc'd, the first DLT_GATE_REASONS */
    int nreasons;
} dlt_gate_result;

/* Reads the manifest at path for the run `run_id`, whose program is the process `top`
 * (`top_problem`: why dlsync cannot enter it, known before it ran, or NULL). Fills *res (free
 * with dlt_gate_free). Returns 0, or -1 when the manifest cannot be read (the run is then not
 * covered at all: res says so) or memory runs out. */
int dlt_gate_read(const char *path, const char *run_id, pid_t top, const char *top_problem, dlt_gate_result *res);

/* Writes the run's summary for mode ("check", "fix", "trace") to out: one line, then one line
 * per process named in res->reasons. */
void dlt_gate_print(const dlt_gate_result *res, const char *mode, FILE *out);

/* Frees what dlt_gate_read allocated. */
void dlt_gate_free(dlt_gate_result *res);

#endif
