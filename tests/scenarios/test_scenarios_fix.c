/* fix mode, repeated: every racy scenario run 100 times under the shim produces the right data
 * every time (the simulator's gates make the race happen on each run without the shim). Under
 * ThreadSanitizer, which makes each run some forty times slower and looks for data races rather
 * than wrong results, 10 runs per scenario. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "scen_run.h"

/* Runs per scenario: 100, or 10 in a ThreadSanitizer build (DLS_SAN comes from the build). */
static int runs(void)
{
    return strstr(DLS_SAN, "thread") ? 10 : 100;
}

static void every_racy_scenario_is_correct_in_every_run(void **state)
{
    (void)state;
    for (const char *const *name = scen_names; *name; name++)
        for (int i = 0, n = runs(); i < n; i++) {
            scen_outcome o;
            if (scen_run(*name, "racy", "fix", NULL, &o) != 0)
                fail_msg("%s: could not start", *name);
            if (o.r.status != 0 || !strstr(o.r.out, "verdict: correct\n"))
                fail_msg("%s run %d: status %d\n%s%s", *name, i, o.r.status, o.r.out, o.r.err);
            scen_run_free(&o);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_racy_scenario_is_correct_in_every_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
