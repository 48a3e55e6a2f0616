/* Benchmark of Python frames in reports (make bench). Prints:
 *   - per ctypes.CDLL call (libc's abs, whose call releases and takes back the GIL through the
 *     hooked PyEval_SaveThread / PyEval_RestoreThread): ns without dlsync, in check mode with
 *     DLSYNC_STACK=native (no hook) and both (the hooks), in fix (no hook), and callgrind's
 *     instructions per call native against both;
 *   - per legacy exchange from Python (export, import, release of a pinned tensor, no kernel;
 *     check mode captures a stack at each of the three): ns with DLSYNC_STACK=native and both,
 *     through ctypes.PyDLL (frames read at once) and ctypes.CDLL (read when the call returns),
 *     and in fix mode, which captures no stack at all;
 *   and the verdict lines of the two figures budgets hold (tests/bench/budget.h): the GIL hooks'
 *   instructions per call and the instructions per Python stack captured.
 * The Python side is tests/python/bench_pyframes.py, run with Debian's python3. */
#include "../bench/budget.h"
#include "dls_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_script[4096], g_libdir[4096], g_pre[8300], g_cupti[4200];

/* The figure bench_pyframes.py prints for `what` in `mode` (NULL: no shim) and `stack`. */
static double figure(const char *mode, const char *stack, const char *what, const char *n, const char *loader)
{
    char m[64], st[64];
    snprintf(m, sizeof m, "DLSYNC_MODE=%s", mode ? mode : "");
    snprintf(st, sizeof st, "DLSYNC_STACK=%s", stack ? stack : "");
    const char *env[] = {mode ? g_pre : "LD_PRELOAD=", g_cupti, m, st, "DLSYNC_LOG=", NULL};
    const char *argv[] = {"/usr/bin/python3", g_script, what, n, g_libdir, loader, NULL};
    return dls_run_number(argv, env);
}

static const char g_calls[] = "import ctypes, sys\nf = ctypes.CDLL(None).abs\n"
                              "for i in range(int(sys.argv[1])): f(-1)\n";

/* callgrind's instruction count (every thread) of the Python program `code` run with `n`, or,
 * when code is NULL, of bench_pyframes.py's exchange figure with `n` per run; check mode with
 * `stack`. */
static double instructions(const char *stack, const char *code, const char *n)
{
    char st[64];
    snprintf(st, sizeof st, "DLSYNC_STACK=%s", stack);
    const char *env[] = {g_pre, g_cupti, "DLSYNC_MODE=check", st, "DLSYNC_LOG=", "PYTHONHASHSEED=0", NULL};
    const char *prog[] = {
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "/usr/bin/python3", "-c", code, n, NULL};
    const char *ex[] = {"valgrind",
                        "--tool=callgrind",
                        "--callgrind-out-file=/dev/null",
                        "/usr/bin/python3",
                        g_script,
                        "exchanges",
                        n,
                        g_libdir,
                        "pydll",
                        NULL};
    const char *const *argv = code ? prog : ex;
    dls_run_result r;
    if (dls_run(argv, env, &r) != 0)
        return -1;
    const char *c = strstr(r.err, "Collected : ");
    double v = r.status == 0 && c ? atof(c + 12) : -1;
    dls_run_free(&r);
    return v;
}

int main(void)
{
    char shim[4096], preload[8192], cp[4096];
    snprintf(g_script, sizeof g_script, "%s/tests/python/bench_pyframes.py", DLS_SRC_DIR);
    dls_build_path(g_libdir, sizeof g_libdir, "scenarios");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    snprintf(g_pre, sizeof g_pre, "LD_PRELOAD=%s", dls_preload_value(preload, sizeof preload, shim));
    snprintf(g_cupti, sizeof g_cupti, "DLSYNC_CUPTI=%s", dls_build_path(cp, sizeof cp, "cudasim/libcupti.so.13"));
    if (access("/usr/bin/python3", X_OK) != 0) {
        printf("bench_pyframes: skipped (no /usr/bin/python3)\n");
        dls_budget_print(DLS_BUDGET_GIL_HOOKS, -1);
        dls_budget_print(DLS_BUDGET_PYTHON_STACK, -1);
        return 0;
    }
    double c0 = figure(NULL, NULL, "calls", "200000", "cdll"),
           cn = figure("check", "native", "calls", "200000", "cdll");
    double cb = figure("check", "both", "calls", "200000", "cdll"),
           cf = figure("fix", "both", "calls", "200000", "cdll");
    printf("bench_pyframes: ctypes.CDLL call of abs() (its GIL release and take-back), median of 5 runs of 200000\n");
    printf("  without dlsync %7.1f ns/call\n", c0);
    printf("  check, native  %7.1f ns/call (no GIL hook)\n", cn);
    printf("  check, both    %7.1f ns/call (the GIL hooks: %+.1f ns)\n", cb, cb - cn);
    printf("  fix            %7.1f ns/call (no GIL hook)\n", cf);
    double n0 = instructions("native", g_calls, "1000"), n1 = instructions("native", g_calls, "11000");
    double b0 = instructions("both", g_calls, "1000"), b1 = instructions("both", g_calls, "11000");
    int measured = n0 > 0 && n1 > 0 && b0 > 0 && b1 > 0;
    if (measured)
        printf("  callgrind, check: %.0f instr/call native, %.0f both (the GIL hooks: %+.0f)\n", (n1 - n0) / 10000.0,
               (b1 - b0) / 10000.0, (b1 - b0 - n1 + n0) / 10000.0);
    else
        printf("  callgrind: valgrind not available\n");
    dls_budget_print(DLS_BUDGET_GIL_HOOKS, measured ? (b1 - b0 - n1 + n0) / 10000.0 : -1);
    printf("bench_pyframes: legacy exchange from Python (MXNDArrayToDLPack, TVMArrayFromDLPack, release; pinned "
           "tensor, no kernel), median of 5 runs of 5000\n");
    double e0 = figure(NULL, NULL, "exchanges", "5000", "pydll");
    double pn = figure("check", "native", "exchanges", "5000", "pydll"),
           pb = figure("check", "both", "exchanges", "5000", "pydll");
    double dn = figure("check", "native", "exchanges", "5000", "cdll"),
           db = figure("check", "both", "exchanges", "5000", "cdll");
    double fb = figure("fix", "both", "exchanges", "5000", "pydll");
    printf("  without dlsync       %8.1f ns/exchange\n", e0);
    printf("  check, PyDLL         %8.1f ns native, %8.1f ns both (Python frames: %+.1f ns, 3 captures)\n", pn, pb,
           pb - pn);
    printf("  check, CDLL          %8.1f ns native, %8.1f ns both (Python frames: %+.1f ns, read at take-back)\n", dn,
           db, db - dn);
    printf("  fix, PyDLL           %8.1f ns (no stack is captured)\n", fb);
    double x0 = instructions("native", NULL, "20"), x1 = instructions("native", NULL, "120");
    double y0 = instructions("both", NULL, "20"), y1 = instructions("both", NULL, "120");
    measured = x0 > 0 && x1 > 0 && y0 > 0 && y1 > 0;
    if (measured) /* 5 runs of 100 more exchanges, 3 stacks each */
        printf("  callgrind, check, PyDLL: %+.0f instr per Python stack captured (beside its native one)\n",
               (y1 - y0 - x1 + x0) / 1500.0);
    dls_budget_print(DLS_BUDGET_PYTHON_STACK, measured ? (y1 - y0 - x1 + x0) / 1500.0 : -1);
    printf("  measured with: [LD_PRELOAD=build/lib/libdlsync.so DLSYNC_MODE=check|fix DLSYNC_STACK=native|both] "
           "/usr/bin/python3 tests/python/bench_pyframes.py calls 200000 | exchanges 5000 build/scenarios "
           "pydll|cdll\n");
    return 0;
}
