/* What a callgrind profile's calls out of some functions cost: read from the text of a callgrind
 * output file (one thread's), for the benchmarks that split a figure by who spent it. */
#ifndef DLS_BENCH_CALLGRIND_CALLS_H
#define DLS_BENCH_CALLGRIND_CALLS_H

/* The inclusive instructions of every call made by a function whose name begins with `from` to
 * a function whose name does not begin with `skip` (so that calls between the `from` functions
 * are not counted twice), summed over the profile in `text`. 0 when there are none. */
double dls_cg_calls_out(const char *text, const char *from, const char *skip);

#endif
