/* Helpers shared by the test programs: paths into the build tree and a subprocess runner.
 *
 * Tests are compiled with DLS_BUILD_DIR (absolute build folder), DLS_SRC_DIR (source root),
 * DLS_SAN / DLS_SAN_RUNTIME (the sanitizer in use and its runtime library, both "" without one).
 * Nothing here knows about CUDA or the shim. */
#ifndef DLS_TEST_H
#define DLS_TEST_H

#include <stddef.h>

/* Result of one child process: exit status (128+signal when killed), and everything it wrote
 * on stdout and stderr, each NUL-terminated and owned by the caller (dls_run_free). */
typedef struct {
    int status;
    char *out;
    char *err;
} dls_run_result;

/* Runs argv[0] (searched in PATH) with argv, with the current environment plus `env`
 * (NULL-terminated "NAME=value" strings; "NAME=" with nothing after '=' unsets NAME), stdin
 * from /dev/null, and waits for it. Returns 0 and fills *res, or -1 when the child could not
 * be started. Output of any size is captured. */
int dls_run(const char *const argv[], const char *const env[], dls_run_result *res);

/* Frees what dls_run captured. */
void dls_run_free(dls_run_result *res);

/* Writes DLS_BUILD_DIR "/" rel into buf (size n) and returns buf. */
const char *dls_build_path(char *buf, size_t n, const char *rel);

/* Builds an LD_PRELOAD value with the sanitizer runtime first (when the build uses one) and
 * then `lib`; returns buf. Needed when preloading an instrumented library into an
 * uninstrumented program. */
const char *dls_preload_value(char *buf, size_t n, const char *lib);

/* Counts non-overlapping occurrences of needle in hay (0 when either is NULL). */
int dls_count(const char *hay, const char *needle);

/* Removes dir and everything below it, as rm -rf does; 0 when it is gone. */
int dls_remove_tree(const char *dir);

/* Reads a whole file into a NUL-terminated malloc'd buffer, or NULL. */
char *dls_read_file(const char *path);

/* Runs argv as dls_run does and returns the number its stdout starts with, or -1 when it could not
 * be started or exited non-zero (benchmark children print their figure). */
double dls_run_number(const char *const argv[], const char *const env[]);

/* Monotonic clock in nanoseconds, for benchmarks. */
double dls_now_ns(void);

/* qsort comparison of doubles (ascending), for benchmark medians. */
int dls_cmp_double(const void *a, const void *b);

#endif
