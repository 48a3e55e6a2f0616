/* Tests of callgrind_calls.c on profiles written the way callgrind writes them: compressed names,
 * calls out of the functions asked about, calls between them, and calls from elsewhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "callgrind_calls.h"

/* A guarded call's cost in the driver counts once, a call between two guarded functions never,
 * and the program's own call of the same driver function not at all; a name given once holds for
 * the id's later uses, in fn= and cfn= lines alike, also when another function's call gave it
 * (dls_cuda_thread_self, named in exchange_path's block, is not counted from dls_drv_*). */
static void only_calls_out_of_the_functions_asked_count(void **state)
{
    (void)state;
    const char *profile = "version: 1\n"
                          "events: Ir\n"
                          "fl=(1) shim/cuda/drv.c\n"
                          "fn=(1) dls_drv_event_record\n"
                          "12 30\n"
                          "cfl=(2) tests/cudasim/drv_queue.c\n"
                          "cfn=(2) cuEventRecord\n"
                          "calls=1 40\n"
                          "13 500\n"
                          "fn=(3) dls_drv_ctx_enter\n"
                          "20 10\n"
                          "cfn=(4) dls_drv_ctx_push_current\n"
                          "calls=1 30\n"
                          "21 90\n"
                          "fn=(4)\n"
                          "31 5\n"
                          "cfn=(5) cuCtxPushCurrent_v2\n"
                          "calls=1 50\n"
                          "+1 70\n"
                          "fn=(6) exchange_path\n"
                          "cfn=(2)\n"
                          "calls=3 40\n"
                          "7 1500\n"
                          "cfn=(7) dls_cuda_thread_self\n"
                          "calls=1 60\n"
                          "9 8\n"
                          "cfn=(1)\n"
                          "calls=1 12\n"
                          "8 530\n"
                          "fn=(1)\n"
                          "cfn=(2)\n"
                          "calls=1 40\n"
                          "13 450\n"
                          "cfn=(7)\n"
                          "calls=1 60\n"
                          "14 8\n"
                          "\n"
                          "totals: 9999\n";
    assert_true(dls_cg_calls_out(profile, "dls_drv_", "dls_") == 500 + 70 + 450);
    assert_true(dls_cg_calls_out(profile, "nothing_", "dls_") == 0);
    assert_true(dls_cg_calls_out("", "dls_drv_", "dls_") == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(only_calls_out_of_the_functions_asked_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
