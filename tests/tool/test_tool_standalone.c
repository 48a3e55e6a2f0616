/* The dlsync command builds without the CUDA headers (tools/module.mk). `make tool` in a build
 * folder of its own, with CUDA_HOME an empty folder (what `make check-tools-standalone` does),
 * compiles the command's objects and nothing of the shim library, each object with the folder of
 * #error headers named like CUDA's first on its include path and no CUDA directory, and the
 * command it links runs; every other goal still asks for the CUDA headers. */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

static char g_dir[64], g_build[128], g_cuda[128], g_build_arg[160], g_cuda_arg[160];

/* The parent make's settings must not reach the child (jobs, BUILD, SAN, CC of this build). */
static const char *const g_env[] = {"MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", "MAKEOVERRIDES=", NULL};

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/dlsync-alone-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    snprintf(g_build, sizeof g_build, "%s/build", g_dir);
    snprintf(g_cuda, sizeof g_cuda, "%s/no-cuda-home", g_dir);
    snprintf(g_build_arg, sizeof g_build_arg, "BUILD=%s", g_build);
    snprintf(g_cuda_arg, sizeof g_cuda_arg, "CUDA_HOME=%s", g_cuda);
    return mkdir(g_cuda, 0755);
}

static int teardown(void **state)
{
    (void)state;
    return dls_remove_tree(g_dir);
}

/* The number of paths that match pattern. */
static size_t matches(const char *pattern)
{
    glob_t g;
    size_t n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
    globfree(&g);
    return n;
}

static void make_tool_builds_the_command_without_cuda_headers(void **state)
{
    (void)state;
    const char *argv[] = {"make", "-C", DLS_SRC_DIR, "-j2", "V=1", g_build_arg, g_cuda_arg, "tool", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, g_env, &r), 0);
    if (r.status != 0)
        fail_msg("make tool with CUDA_HOME=%s failed (%d):\n%s\n%s", g_cuda, r.status, r.out, r.err);
    char poison[200];
    snprintf(poison, sizeof poison, "-I %s/tools/no-cuda ", g_build);
    size_t compiles = 0;
    char *save = NULL;
    for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strstr(line, " -c "))
            continue;
        compiles++;
        const char *first_inc = strstr(line, "-I ");
        if (!first_inc || strncmp(first_inc, poison, strlen(poison)) != 0)
            fail_msg("the #error headers are not first on the include path: %s", line);
        if (strstr(line, g_cuda) || strstr(line, "cuda/include"))
            fail_msg("a CUDA directory on the include path: %s", line);
    }
    dls_run_free(&r);

    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s/tools/*.c", DLS_SRC_DIR);
    size_t sources = matches(pattern);
    snprintf(pattern, sizeof pattern, "%s/obj/tools/*.o", g_build);
    assert_int_equal(matches(pattern), sources);
    snprintf(pattern, sizeof pattern, "%s/obj/tools/shim/*/*.o", g_build);
    size_t shared = matches(pattern);
    assert_true(shared > 0);
    assert_int_equal(compiles, sources + shared);
    snprintf(pattern, sizeof pattern, "%s/obj/shim", g_build);
    assert_int_equal(matches(pattern), 0); /* nothing of the shim library */

    char bin[200];
    snprintf(bin, sizeof bin, "%s/bin/dlsync", g_build);
    const char *version[] = {bin, "--version", NULL};
    assert_int_equal(dls_run(version, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "dlsync"));
    dls_run_free(&r);
}

static void every_other_goal_still_asks_for_the_cuda_headers(void **state)
{
    (void)state;
    const char *argv[] = {"make", "-C", DLS_SRC_DIR, "-n", g_build_arg, g_cuda_arg, "all", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, g_env, &r), 0);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "CUDA headers not found"));
    assert_non_null(strstr(r.err, "make tool"));
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(make_tool_builds_the_command_without_cuda_headers),
        cmocka_unit_test(every_other_goal_still_asks_for_the_cuda_headers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
