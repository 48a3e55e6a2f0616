/* The cost budgets of `make bench`: the one table of the figures held, each with the most it may
 * be. A benchmark prints each held figure's verdict line beside the figure (dls_budget_print);
 * `make bench` ends with the one-line verdict of all of them (bench_verdict) and fails when a
 * figure is over its budget or was not measured.
 *
 * DLS_BUDGET(id, key, bench, figure, most)
 *   id      DLS_BUDGET_<id>
 *   key     the figure's name in its verdict line: "budget <key> (<figure>): ..."
 *   bench   the benchmark that measures it
 *   figure  what is measured (callgrind instructions: dlsync's own cost, that is against the
 *           null subscriber, for a stream operation; against no shim for an exchange, a stream
 *           created and destroyed, and a wrapped call)
 *   most    the budget: the figure is within it when it is at most this */
#ifndef DLS_BENCH_BUDGET_H
#define DLS_BENCH_BUDGET_H

#include <stddef.h>

#define DLS_BUDGETS(X)                                                                                                \
    X(FIX_OP, "fix-op", "bench_cost", "fix, per cudaMemsetAsync, calling thread", 600)                                \
    X(FIX_PENDING_OP, "fix-pending-op", "bench_cost",                                                                 \
      "fix with one exchanged tensor pending, per cudaMemsetAsync, calling thread", 850)                              \
    X(CHECK_OP, "check-op", "bench_cost", "check, per cudaMemsetAsync, calling thread", 760)                          \
    X(FIX_EXCHANGE, "fix-exchange", "bench_cost", "fix, per legacy exchange of a device tensor, whole process", 4000) \
    X(LOG_RECORD, "log-record", "bench_cost", "per log record, whole process", 1000)                                  \
    X(STREAM_CREATE_DESTROY, "stream-create-destroy", "bench_cost",                                                   \
      "fix, per cudaStreamCreateWithFlags + cudaStreamDestroy, calling thread", 1500)                                 \
    X(FIX_STREAM_EXCHANGE, "fix-stream-exchange", "bench_cost",                                                       \
      "fix, per legacy exchange with a stream the consumer creates and destroys for it, calling thread", 4050)        \
    X(HOOKS_EXPORT_RELEASE, "hooks-export-release", "bench_hooks",                                                    \
      "a wrapped export+release with the log off, over a direct one, whole process", 500)                             \
    X(GIL_HOOKS, "gil-hooks", "bench_pyframes",                                                                       \
      "check, the GIL hooks per ctypes call (release and take-back), whole process", 60)                              \
    X(PYTHON_STACK, "python-stack", "bench_pyframes",                                                                 \
      "check, per Python stack captured beside its native one, whole process", 16000)

typedef enum {
#define DLS_BUDGET_ID_(id, key, bench, figure, most) DLS_BUDGET_##id,
    DLS_BUDGETS(DLS_BUDGET_ID_)
#undef DLS_BUDGET_ID_
        DLS_BUDGET_COUNT
} dls_budget_id;

/* A figure's verdict. */
typedef enum { DLS_BUDGET_WITHIN, DLS_BUDGET_OVER, DLS_BUDGET_UNMEASURED } dls_budget_verdict;

/* Writes the verdict line of figure id measured as `value` instructions (negative: it could not
 * be measured) into buf (size n, no newline):
 *   budget <key> (<figure>): <value> instructions, budget <most>: within budget | OVER budget
 *   budget <key> (<figure>): not measured, budget <most>
 * and returns the verdict. */
dls_budget_verdict dls_budget_line(char *buf, size_t n, dls_budget_id id, double value);

/* Prints the verdict line of figure id on stdout, indented by two spaces; returns the verdict. */
dls_budget_verdict dls_budget_print(dls_budget_id id, double value);

/* Reads the output of the benchmarks (`text`) for each figure's verdict line and writes the
 * one-line verdict of all of them into buf (size n, no newline): "bench: all N figures within
 * budget", or how many are over budget and not measured, naming each with its line's figure (a
 * figure whose line is missing counts as not measured). Returns 0 when every figure is within
 * budget, else 1. */
int dls_budget_verdict_of(const char *text, char *buf, size_t n);

#endif
