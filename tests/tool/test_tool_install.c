/* Test of `make install` / `make uninstall`: installs this build into a temporary DESTDIR with
 * PREFIX=/usr, checks every installed file, runs the installed `dlsync run` (which must find the
 * installed library), then uninstalls and checks that nothing is left. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

static const char *const installed[] = {"usr/bin/dlsync", "usr/lib/libdlsync.so", "usr/lib/pkgconfig/dlsync.pc",
                                        "usr/share/man/man1/dlsync.1", NULL};
static const char *const headers[] = {"dlsync.h", "dlsync_dlpack.h", NULL};

static void make(const char *dest, const char *target)
{
    char build[600], san[128], cuda[600], destdir[300];
    snprintf(build, sizeof build, "BUILD=%s", DLS_BUILD_DIR);
    snprintf(san, sizeof san, "SAN=%s", DLS_SAN);
    snprintf(cuda, sizeof cuda, "CUDA_HOME=%s", DLS_TEST_CUDA_HOME);
    snprintf(destdir, sizeof destdir, "DESTDIR=%s", dest);
    const char *argv[] = {"make",  "--no-print-directory", "-C",   DLS_SRC_DIR, build, san, cuda,
                          destdir, "PREFIX=/usr",          target, NULL};
    /* A make that runs this test must not hand its jobserver to this one. */
    const char *env[] = {"MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    if (r.status != 0)
        fail_msg("make %s failed (%d): %s", target, r.status, r.err);
    dls_run_free(&r);
}

static void install_run_uninstall(void **state)
{
    (void)state;
    char dest[] = "/tmp/dlsync-install-XXXXXX", path[512], lib[512];
    assert_non_null(mkdtemp(dest));
    make(dest, "install");
    for (int i = 0; installed[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dest, installed[i]);
        if (access(path, R_OK) != 0)
            fail_msg("%s was not installed", installed[i]);
    }
    for (int i = 0; headers[i]; i++) {
        char src[512];
        snprintf(src, sizeof src, "%s/shim/include/%s", DLS_SRC_DIR, headers[i]);
        snprintf(path, sizeof path, "%s/usr/include/%s", dest, headers[i]);
        assert_int_equal(access(src, R_OK) == 0, access(path, R_OK) == 0);
    }
    snprintf(path, sizeof path, "%s/usr/lib/pkgconfig/dlsync.pc", dest);
    char *pc = dls_read_file(path);
    assert_non_null(strstr(pc, "prefix=/usr\n"));
    assert_non_null(strstr(pc, "Libs: -L${libdir} -ldlsync"));
    free(pc);

    char bin[512];
    snprintf(bin, sizeof bin, "%s/usr/bin/dlsync", dest);
    const char *truth[] = {bin, "run", "--", "/bin/true", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(truth, NULL, &r), 0);
    if (r.status != 0)
        fail_msg("installed dlsync run -- /bin/true: status %d: %s", r.status, r.err);
    dls_run_free(&r);
    /* The installed command preloads the installed library, not the build tree's. */
    snprintf(path, sizeof path, "%s/usr/lib/libdlsync.so", dest);
    assert_non_null(realpath(path, lib));
    const char *env_argv[] = {bin, "run", "--mode", "off", "--", "/usr/bin/env", NULL};
    assert_int_equal(dls_run(env_argv, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    char want[600];
    snprintf(want, sizeof want, "CUDA_INJECTION64_PATH=%s\n", lib);
    assert_non_null(strstr(r.out, want));
    dls_run_free(&r);

    make(dest, "uninstall");
    for (int i = 0; installed[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dest, installed[i]);
        if (access(path, F_OK) == 0)
            fail_msg("%s is left after uninstall", installed[i]);
    }
    for (int i = 0; headers[i]; i++) {
        snprintf(path, sizeof path, "%s/usr/include/%s", dest, headers[i]);
        assert_int_equal(access(path, F_OK), -1);
    }
    const char *rm[] = {"/bin/rm", "-rf", dest, NULL};
    assert_int_equal(dls_run(rm, NULL, &r), 0);
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(install_run_uninstall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
