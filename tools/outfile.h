/* The files `dlsync report` writes beside its summary (--chrome-trace's timeline, --html's
 * page), under one set of rules so that a report never loses data: the file is never one of the
 * logs being read (the same file, standard input's included), nor an existing file that looks
 * like a dlsync log (a forgotten name makes a log the output: `--html run.*.jsonl`), nor a
 * directory; `-` is standard output; an existing regular file is replaced only once the new one
 * is written whole (a new file in the same directory renamed over it), and anything else (a
 * FIFO, /dev/null) is written directly. */
#ifndef DLT_OUTFILE_H
#define DLT_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* Writes the whole output to f; returns 0, or -1 when it could not (out of memory). */
typedef int (*dlt_outfile_writer)(void *ctx, FILE *f);

/* NULL when `out` may be written while the ninputs logs inputs ("-": standard input) are read,
 * else why not, in a few words; `example` is the option with a good name, said when the file
 * looks like a log ("--html report.html"). */
const char *dlt_outfile_refuse(const char *out, const char *const *inputs, size_t ninputs, const char *example);

/* 1 when the outputs a and b (neither "-") name the same file. */
int dlt_outfile_same(const char *a, const char *b);

/* Writes the output of write(ctx, f) to path as the rules say (standard output for "-"). Returns
 * 0, or -1 after saying on stderr why it was not written (nothing of it then replaces an
 * existing file). */
int dlt_outfile_write(const char *path, dlt_outfile_writer write, void *ctx);

#endif
