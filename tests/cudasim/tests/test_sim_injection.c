/* test_sim_injection.c: cuInit loads CUDA_INJECTION64_PATH once and calls its
 * InitializeInjection, which can subscribe to CUPTI before any other driver work. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <cmocka.h>

#include <cupti.h>

#include "cudasim.h"
#include "dls_test.h"

static atomic_int *symbol(const char *name)
{
    atomic_int *p = dlsym(RTLD_DEFAULT, name);
    assert_non_null(p);
    return p;
}

static void cuinit_loads_the_injection_once(void **state)
{
    (void)state;
    assert_null(dlsym(RTLD_DEFAULT, "sim_injection_inits"));
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(atomic_load(symbol("sim_injection_inits")), 1);
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(atomic_load(symbol("sim_injection_inits")), 1);
}

static void CUPTIAPI ignore(void *u, CUpti_CallbackDomain d, CUpti_CallbackId c, const void *x)
{
    (void)u, (void)d, (void)c, (void)x;
}

static void the_injected_subscriber_sees_later_calls(void **state)
{
    (void)state;
    CUcontext ctx;
    int before = atomic_load(symbol("sim_injection_callbacks"));
    assert_int_equal(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    assert_int_equal(atomic_load(symbol("sim_injection_callbacks")), before + 2);
    CUpti_SubscriberHandle mine;
    assert_int_equal(cuptiSubscribe(&mine, ignore, NULL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
}

int main(void)
{
    char lib[4096];
    setenv("CUDA_INJECTION64_PATH", dls_build_path(lib, sizeof lib, "tests/libsim_injection.so"), 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuinit_loads_the_injection_once),
        cmocka_unit_test(the_injected_subscriber_sees_later_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
