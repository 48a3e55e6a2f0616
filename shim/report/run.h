/* The run this process belongs to, and the run's manifest (DLSYNC_RUN_ID, DLSYNC_RUN_MANIFEST).
 *
 * A run is what one `dlsync run` started or, without it, the process tree that inherited one
 * identity: a process that finds no DLSYNC_RUN_ID makes one and puts it in its environment for
 * its children (dls_run_adopt). Every log's start record names the run and the process: its pid,
 * its parent's and its start time (the kernel's, in clock ticks after boot: the same across
 * exec, different for another process that later gets the same pid), so the images of one
 * process are told apart from another process with the same pid.
 *
 * The manifest is a file `dlsync run` created; each process of the run appends lines to it, each
 * with one write(2) on a descriptor opened for that line alone (O_APPEND, never created, only
 * when it is a regular file), so a program that closed or reused descriptors, or changed its
 * directory, cannot make it lose one:
 *   {"ev":"log",...}    an image (or a forked child) opened its log (`path`), or could not
 *                       (`error`), or has none (`path` null)
 *   {"ev":"end",...}    it ends: the summary's fields (report/summary.h)
 *   {"ev":"inert",...}  it is a second copy of the shim in a process, which stays inert
 * Each line also has `run`, `proc_start`, `ppid` and `exe`. `dlsync run` reads only the logs
 * named there. Nothing here can fail the caller; a line that cannot be written is said once. */
#ifndef DLS_RUN_H
#define DLS_RUN_H

#include "json.h"

#include <stdint.h>

/* Makes this process's run identity when DLSYNC_RUN_ID gave none, and sets DLSYNC_RUN_ID to it
 * for the children. Called once by the shim's start-up, before any log record. */
void dls_run_adopt(void);

/* The run identity: DLSYNC_RUN_ID's, else the one dls_run_adopt made ("" before that). */
const char *dls_run_id(void);

/* The calling process's start time in clock ticks after boot (/proc/self/stat), read once per
 * process (a forked child reads its own); 0 when it cannot be read. */
uint64_t dls_run_proc_start(void);

/* Adds the members every start record and manifest line has: "run", "proc_start", "ppid". */
void dls_run_identity(dls_rec *j);

/* 1 when the process has a run manifest to write to. */
int dls_run_has_manifest(void);

/* Starts a manifest line of kind ev ("log", "end", "inert") in j: the log's common keys (ev, t,
 * pid, tid), the identity above and "exe". Finish it with dls_run_append. */
void dls_run_begin(dls_rec *j, const char *ev);

/* Closes the line j, appends it to the manifest (when there is one) and releases j. */
void dls_run_append(dls_rec *j);

#endif
