/* The randomized exchange-program tester (tests/synth/gen_exchange.c): GEN_PROGRAMS programs
 * (default 40, 6 under a sanitizer; every other one synchronized by hand, the others racy) from
 * seed GEN_SEED (default 1), each run plainly, under check and under fix, with the simulator's jitter on:
 * - plain: a synchronized program reads right in every read (the generator, the simulator and
 *   CUDA's rules agree); the racy programs, together, read wrong (the tester can fail): on a
 *   loaded machine a racy run may happen to read right, so they are run plainly again, up to
 *   PLAIN_PASSES times in all, until one reads wrong;
 * - fix: every read of every program is right;
 * - check: a synchronized program gets no race report; a racy program that read wrong plainly
 *   gets at least one, and a check run reports at least as many races as it read wrong values
 *   (each wrong read is a use of its own exchange that check must report).
 * GEN_MODES=fix runs only the fix runs (CI's long run adds thousands of programs that way; so
 * does a ThreadSanitizer build, where unordered reads are data races);
 * GEN_VERBOSE=1 names every run that read wrong. A failure names the seed and the command that
 * replays the program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

#define JITTER "CUDASIM_JITTER_US=10"
#define PLAIN_PASSES 4

typedef struct {
    int reads, wrong, races;
} outcome;

static unsigned long env_ul(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoul(v, NULL, 0) : dflt;
}

/* The races the shim's exit summary counts in log text (0 when there is none). */
static int summary_races(const char *log)
{
    const char *s = log ? strstr(log, "\"ev\":\"summary\"") : NULL;
    const char *r = s ? strstr(s, "\"races\":") : NULL;
    return r ? atoi(r + 8) : 0;
}

/* Runs program `seed` of class `cls` (synced or racy) in `mode` (NULL: without the shim). */
static outcome run(unsigned long seed, const char *cls, const char *mode)
{
    char prog[1024], shim[1024], preload[2048], pre_env[2100], seedtxt[32], mode_env[64], log_env[128];
    char log[] = "/tmp/dls_gen_XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    dls_build_path(prog, sizeof prog, "synth/gen_exchange");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    snprintf(pre_env, sizeof pre_env, "LD_PRELOAD=%s", mode ? dls_preload_value(preload, sizeof preload, shim) : "");
    snprintf(seedtxt, sizeof seedtxt, "%lu", seed);
    snprintf(mode_env, sizeof mode_env, "DLSYNC_MODE=%s", mode ? mode : "");
    snprintf(log_env, sizeof log_env, "DLSYNC_LOG=%s", mode ? log : "");
    const char *argv[] = {prog, seedtxt, cls, NULL};
    const char *env[] = {pre_env, mode_env, log_env, JITTER, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    outcome o = {0};
    const char *line = strstr(r.out, "reads ");
    if (r.status != 0 || !line || sscanf(line, "reads %d wrong %d", &o.reads, &o.wrong) != 2)
        fail_msg("program %lu %s (%s): status %d\n%s%s\nreplay: %s=10 %s%s%s %s %lu %s --print", seed, cls,
                 mode ? mode : "plain", r.status, r.out, r.err, "CUDASIM_JITTER_US", mode ? pre_env : "",
                 mode ? " " : "", mode ? mode_env : "", prog, seed, cls);
    char *text = dls_read_file(log);
    o.races = summary_races(text);
    free(text);
    unlink(log);
    if (o.wrong && getenv("GEN_VERBOSE"))
        print_message("program %lu %s (%s): %d of %d reads wrong, %d races reported\n", seed, cls,
                      mode ? mode : "plain", o.wrong, o.reads, o.races);
    dls_run_free(&r);
    return o;
}

static void generated_programs_read_what_host_order_says(void **state)
{
    (void)state;
    /* A sanitizer makes every run many times slower: a few programs then. */
    unsigned long first = env_ul("GEN_SEED", 1), n = env_ul("GEN_PROGRAMS", *DLS_SAN ? 6 : 40);
    const char *modes = getenv("GEN_MODES");
    /* Under ThreadSanitizer the racy runs race for real: its report of the simulated kernels would
     * end them. Only fix, which orders every read, runs there. */
    int fix_only = (modes && strcmp(modes, "fix") == 0) || strstr(DLS_SAN, "thread");
    long plain_wrong = 0, fix_reads = 0;
    print_message("%lu programs from seed %lu%s\n", n, first, fix_only ? ", fix only" : "");
    for (unsigned long seed = first; seed < first + n; seed++) {
        const char *cls = seed % 2 ? "racy" : "synced";
        int racy = seed % 2;
        outcome fix = run(seed, cls, "fix");
        fix_reads += fix.reads;
        if (fix.wrong)
            fail_msg("program %lu %s: %d of %d reads wrong under fix; replay: CUDASIM_JITTER_US=10 "
                     "LD_PRELOAD=build/lib/libdlsync.so DLSYNC_MODE=fix build/synth/gen_exchange %lu %s --print",
                     seed, cls, fix.wrong, fix.reads, seed, cls);
        if (fix_only)
            continue;
        outcome plain = run(seed, cls, NULL), check = run(seed, cls, "check");
        if (!racy && plain.wrong)
            fail_msg("synchronized program %lu read wrong without dlsync (%d of %d): the generator or the simulator "
                     "breaks CUDA's rules; replay: CUDASIM_JITTER_US=10 build/synth/gen_exchange %lu synced --print",
                     seed, plain.wrong, plain.reads, seed);
        if (!racy && check.races)
            fail_msg("synchronized program %lu: check reported %d races; replay: CUDASIM_JITTER_US=10 "
                     "LD_PRELOAD=build/lib/libdlsync.so DLSYNC_MODE=check build/synth/gen_exchange %lu synced --print",
                     seed, check.races, seed);
        if (racy && plain.wrong && !check.races)
            fail_msg("racy program %lu read wrong plainly (%d reads) and check reported nothing; replay: "
                     "CUDASIM_JITTER_US=10 LD_PRELOAD=build/lib/libdlsync.so DLSYNC_MODE=check "
                     "build/synth/gen_exchange %lu racy --print",
                     seed, plain.wrong, seed);
        if (check.races < check.wrong) /* every read that went wrong under check was reported */
            fail_msg("program %lu %s: %d reads wrong under check but only %d races reported; replay: "
                     "CUDASIM_JITTER_US=10 LD_PRELOAD=build/lib/libdlsync.so DLSYNC_MODE=check "
                     "build/synth/gen_exchange %lu %s --print",
                     seed, cls, check.wrong, check.races, seed, cls);
        plain_wrong += plain.wrong;
    }
    int passes = 1;
    for (; !fix_only && !plain_wrong && passes < PLAIN_PASSES; passes++) /* the racy ones again */
        for (unsigned long seed = first | 1; seed < first + n; seed += 2)
            plain_wrong += run(seed, "racy", NULL).wrong;
    if (fix_only)
        print_message("fix: %ld reads, all right\n", fix_reads);
    else
        print_message("fix: %ld reads, all right; plain: %ld wrong reads in the racy programs (%d pass%s)\n", fix_reads,
                      plain_wrong, passes, passes == 1 ? "" : "es");
    if (!fix_only && !plain_wrong)
        fail_msg("the racy programs read right in %d plain passes: the tester cannot tell a race", passes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generated_programs_read_what_host_order_says),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
