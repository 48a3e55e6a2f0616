/* The cost budgets of `make bench`: the one table of the figures held, each with the most it may
 * be. A benchmark prints each held figure's verdict line beside the figure (dls_budget_print);
 * `make bench` ends with the one-line verdict of all of them (bench_verdict) and fails when a
 * figure is over its budget or was not measured.
 *
 * Two classes of figure: a budget (DLS_HELD) holds what the code does today, and a figure over
 * it fails `make bench`; a goal (DLS_GOAL) is where the code is meant to go (issue 47's targets),
 * printed against its target and counted in the verdict as met or not yet met, without failing
 * `make bench` while it is not met (a goal that cannot be measured fails it, as a budget does).
 * A goal the code meets becomes a budget by changing its class.
 *
 * DLS_BUDGET(id, key, bench, figure, unit, most, class)
 *   id      DLS_BUDGET_<id>
 *   key     the figure's name in its verdict line: "budget <key> (<figure>): ..." ("goal <key>"
 *           for a goal)
 *   bench   the benchmark that measures it
 *   figure  what is measured (callgrind instructions: dlsync's own cost, that is against the
 *           null subscriber, for a stream operation; against no shim for an exchange, a stream
 *           created and destroyed, and a wrapped call; against DLSYNC_MODE=off for an exchange's
 *           whole path; driver calls: the simulator's trace, against DLSYNC_MODE=off; memory:
 *           the growth of the heap dlsync still holds after a soak pipeline from one length to ten times it)
 *   unit    what the figure counts ("instructions", "driver calls", "% growth")
 *   most    the budget: the figure is within it when it is at most this
 *   class   DLS_HELD or DLS_GOAL */
#ifndef DLS_BENCH_BUDGET_H
#define DLS_BENCH_BUDGET_H

#include <stddef.h>

#define DLS_INSTR "instructions"
#define DLS_CALLS "driver calls"
#define DLS_GROWTH "% growth"

#define DLS_BUDGETS(X)                                                                                                 \
    X(FIX_OP, "fix-op", "bench_cost", "fix, per cudaMemsetAsync, calling thread", DLS_INSTR, 600, DLS_HELD)            \
    X(FIX_PENDING_OP, "fix-pending-op", "bench_cost",                                                                  \
      "fix with one exchanged tensor pending, per cudaMemsetAsync, calling thread", DLS_INSTR, 850, DLS_HELD)          \
    X(CHECK_OP, "check-op", "bench_cost", "check, per cudaMemsetAsync, calling thread", DLS_INSTR, 760, DLS_HELD)      \
    X(FIX_EXCHANGE, "fix-exchange", "bench_cost",                                                                      \
      "fix, per legacy exchange of a device tensor with no device work, whole process", DLS_INSTR, 4000, DLS_HELD)     \
    X(LOG_RECORD, "log-record", "bench_cost", "per log record, whole process", DLS_INSTR, 1000, DLS_HELD)              \
    X(STREAM_CREATE_DESTROY, "stream-create-destroy", "bench_cost",                                                    \
      "fix, per cudaStreamCreateWithFlags + cudaStreamDestroy, calling thread", DLS_INSTR, 1500, DLS_HELD)             \
    X(FIX_STREAM_EXCHANGE, "fix-stream-exchange", "bench_cost",                                                        \
      "fix, per legacy exchange with a stream the consumer creates and destroys for it, calling thread", DLS_INSTR,    \
      4050, DLS_HELD)                                                                                                  \
    X(HOOKS_EXPORT_RELEASE, "hooks-export-release", "bench_hooks",                                                     \
      "a wrapped export+release with the log off, over a direct one, whole process", DLS_INSTR, 500, DLS_HELD)         \
    X(GIL_HOOKS, "gil-hooks", "bench_pyframes",                                                                        \
      "check, the GIL hooks per ctypes call (release and take-back), whole process", DLS_INSTR, 60, DLS_HELD)          \
    X(PYTHON_STACK, "python-stack", "bench_pyframes",                                                                  \
      "check, per Python stack captured beside its native one, whole process", DLS_INSTR, 16000, DLS_HELD)             \
    X(FIX_ORDERED_PATH, "fix-ordered-path", "bench_pipeline",                                                          \
      "fix, per already-ordered exchange, whole path, calling thread", DLS_INSTR, 3000, DLS_GOAL)                      \
    X(FIX_ORDERED_CALLS, "fix-ordered-calls", "bench_pipeline",                                                        \
      "fix, dlsync's driver calls per already-ordered exchange", DLS_CALLS, 0, DLS_HELD)                               \
    X(FIX_LEGACY_PATH, "fix-legacy-path", "bench_pipeline",                                                            \
      "fix, per legacy exchange that needs its wait, whole path, calling thread", DLS_INSTR, 6000, DLS_GOAL)           \
    X(FIX_LEGACY_CALLS, "fix-legacy-calls", "bench_pipeline",                                                          \
      "fix, dlsync's driver calls per legacy exchange that needs its waits (a record and a wait each way)", DLS_CALLS, \
      4, DLS_HELD)                                                                                                     \
    X(CHECK_ORDERED_PATH, "check-ordered-path", "bench_pipeline",                                                      \
      "check, per already-ordered exchange, whole path, calling thread", DLS_INSTR, 20000, DLS_HELD)                   \
    X(FIX_SOAK_GROWTH, "fix-soak-growth", "bench_soak",                                                                \
      "fix, dlsync's extra heap held after a soak pipeline, from N to 10N exchanges", DLS_GROWTH, 5, DLS_HELD)         \
    X(CHECK_SOAK_GROWTH, "check-soak-growth", "bench_soak",                                                            \
      "check, dlsync's extra heap held after a soak pipeline, from N to 10N exchanges", DLS_GROWTH, 5, DLS_HELD)

/* A figure's class: a budget the code holds, or a goal it is meant to reach. */
typedef enum { DLS_HELD, DLS_GOAL } dls_budget_class;

typedef enum {
#define DLS_BUDGET_ID_(id, key, bench, figure, unit, most, class) DLS_BUDGET_##id,
    DLS_BUDGETS(DLS_BUDGET_ID_)
#undef DLS_BUDGET_ID_
        DLS_BUDGET_COUNT
} dls_budget_id;

/* A figure's verdict. */
typedef enum { DLS_BUDGET_WITHIN, DLS_BUDGET_OVER, DLS_BUDGET_UNMEASURED } dls_budget_verdict;

/* Writes the verdict line of figure id measured as `value` in its unit (negative: it could not be
 * measured) into buf (size n, no newline):
 *   budget <key> (<figure>): <value> <unit>, budget <most>: within budget | OVER budget
 *   budget <key> (<figure>): not measured, budget <most>
 * and for a goal:
 *   goal <key> (<figure>): <value> <unit>, goal <most>: goal met | goal not yet met
 *   goal <key> (<figure>): not measured, goal <most>
 * and returns the verdict (a goal not met: DLS_BUDGET_OVER). */
dls_budget_verdict dls_budget_line(char *buf, size_t n, dls_budget_id id, double value);

/* Prints the verdict line of figure id on stdout, indented by two spaces; returns the verdict. */
dls_budget_verdict dls_budget_print(dls_budget_id id, double value);

/* Reads the output of the benchmarks (`text`) for each figure's verdict line and writes the
 * one-line verdict of all of them into buf (size n, no newline): "bench: all N figures within
 * budget", or how many are over budget and not measured, naming each with its line's figure (a
 * figure whose line is missing counts as not measured); then "; goals met: K of G", naming each
 * goal not yet met or not measured. Returns 0 when every budget is within and every goal
 * measured, else 1. */
int dls_budget_verdict_of(const char *text, char *buf, size_t n);

#endif
