/* Unit tests of shim/common/map.h: the one open-addressing map, against a brute-force list, with
 * colliding keys, chains that wrap around the table's end, rehashing, a full table and string
 * keys compared by their text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"

typedef struct {
    uintptr_t key;
    uint64_t value;
} entry;

/* Keys are addresses, as the shim's are. */
static char g_arena[1 << 16];
#define KEY(i) ((uintptr_t)&g_arena[(i)])

/* The first `want` keys above arena offset `from` whose home in a table of `cap` slots is `home`. */
static void keys_at_home(size_t cap, size_t home, size_t from, uintptr_t *out, size_t want)
{
    entry probe[64];
    dls_map m = DLS_MAP_OVER(DLS_MAP_WORDS, probe);
    m.cap = cap;
    for (size_t k = from + 8; want; k += 8)
        if (dls_map_home(&m, KEY(k)) == home) {
            *out++ = KEY(k);
            want--;
        }
}

static void keys_are_found_changed_and_removed(void **state)
{
    (void)state;
    static entry slots[16];
    dls_map m = DLS_MAP_OVER(DLS_MAP_WORDS, slots);
    assert_null(dls_map_get(&m, KEY(0x1000)));
    entry *e = dls_map_put(&m, KEY(0x1000));
    assert_non_null(e);
    assert_int_equal(e->key, KEY(0x1000));
    e->value = 7;
    assert_int_equal(dls_map_count(&m), 1);
    assert_ptr_equal(dls_map_put(&m, KEY(0x1000)), e); /* the same key: the same slot, not counted again */
    assert_int_equal(dls_map_count(&m), 1);
    assert_int_equal(((entry *)dls_map_get(&m, KEY(0x1000)))->value, 7);
    size_t i = dls_map_index(&m, KEY(0x1000));
    assert_int_equal(dls_map_key_at(&m, i), KEY(0x1000));
    dls_map_remove_at(&m, i);
    assert_null(dls_map_get(&m, KEY(0x1000)));
    assert_int_equal(dls_map_count(&m), 0);
}

/* Keys sharing one home slot near the end of the table: their chain wraps to slot 0. Removing
 * any of them leaves every other one found. */
static void a_chain_that_wraps_survives_each_removal(void **state)
{
    (void)state;
    for (size_t victim = 0; victim < 4; victim++) {
        static entry slots[16];
        dls_map m = DLS_MAP_OVER(DLS_MAP_WORDS, slots);
        dls_map_clear(&m);
        uintptr_t k[4], other[2];
        keys_at_home(16, 14, 0, k, 4);
        keys_at_home(16, 0, 0, other, 2); /* at home where the wrapped chain passes */
        for (int j = 0; j < 4; j++)
            ((entry *)dls_map_put(&m, k[j]))->value = k[j] * 3;
        for (int j = 0; j < 2; j++)
            ((entry *)dls_map_put(&m, other[j]))->value = other[j] * 3;
        assert_int_equal(dls_map_key_at(&m, 1), k[3]); /* 14, 15, 0, 1: wrapped */
        dls_map_remove_at(&m, dls_map_index(&m, k[victim]));
        for (int j = 0; j < 4; j++) {
            entry *e = dls_map_get(&m, k[j]);
            if ((size_t)j == victim) {
                assert_null(e);
            } else {
                assert_non_null(e);
                assert_int_equal(e->value, k[j] * 3);
            }
        }
        for (int j = 0; j < 2; j++)
            assert_int_equal(((entry *)dls_map_get(&m, other[j]))->value, other[j] * 3);
        assert_int_equal(dls_map_count(&m), 5);
    }
}

/* A table holds at most half its slots: a new key beyond that is refused, a held one is not. */
static void a_full_table_refuses_new_keys_only(void **state)
{
    (void)state;
    static entry slots[8];
    dls_map m = DLS_MAP_OVER(DLS_MAP_WORDS, slots);
    for (uintptr_t k = 1; k <= 4; k++) {
        assert_false(dls_map_full(&m));
        assert_non_null(dls_map_put(&m, KEY(k)));
    }
    assert_true(dls_map_full(&m));
    assert_null(dls_map_put(&m, KEY(5)));
    assert_non_null(dls_map_put(&m, KEY(3)));
    assert_int_equal(dls_map_count(&m), 4);
    dls_map none = DLS_MAP_INIT(DLS_MAP_WORDS, entry); /* no storage: full, finds nothing */
    assert_true(dls_map_full(&none));
    assert_null(dls_map_get(&none, KEY(1)));
    assert_null(dls_map_put(&none, KEY(1)));
}

/* Random puts, removals and lookups over a small pool of keys (so chains collide and wrap), with
 * the table grown now and then, against a plain list of what should be there. */
static void random_operations_match_a_plain_list(void **state)
{
    (void)state;
    enum { POOL = 40, STEPS = 200000 };
    uintptr_t pool[POOL];
    uint64_t want[POOL]; /* 0: absent */
    unsigned seed = 2024;
    for (int i = 0; i < POOL; i++) {
        pool[i] = KEY(i * 48);
        want[i] = 0;
    }
    dls_map m = DLS_MAP_INIT(DLS_MAP_WORDS, entry);
    free(dls_map_rehash(&m, calloc(8, sizeof(entry)), 8));
    size_t held = 0;
    for (int step = 0; step < STEPS; step++) {
        int i = (int)(rand_r(&seed) % POOL);
        switch (rand_r(&seed) % 3) {
        case 0: { /* put, growing when full */
            if (!want[i] && dls_map_full(&m)) {
                size_t cap = m.cap * 2;
                free(dls_map_rehash(&m, calloc(cap, sizeof(entry)), cap));
            }
            entry *e = dls_map_put(&m, pool[i]);
            assert_non_null(e);
            held += !want[i];
            e->value = want[i] = (uint64_t)step + 1;
            break;
        }
        case 1: { /* remove */
            size_t at = dls_map_index(&m, pool[i]);
            assert_int_equal(dls_map_key_at(&m, at) != 0, want[i] != 0);
            if (want[i]) {
                dls_map_remove_at(&m, at);
                want[i] = 0;
                held--;
            }
            break;
        }
        default: /* shrink back to a small table now and then: chains get long again */
            if (held * 2 < 16 && m.cap > 16 && rand_r(&seed) % 64 == 0)
                free(dls_map_rehash(&m, calloc(16, sizeof(entry)), 16));
            break;
        }
        assert_int_equal(dls_map_count(&m), held);
        if (step % 97 == 0)
            for (int j = 0; j < POOL; j++) {
                entry *e = dls_map_get(&m, pool[j]);
                if (want[j]) {
                    assert_non_null(e);
                    assert_int_equal(e->value, want[j]);
                } else {
                    assert_null(e);
                }
            }
    }
    free(dls_map_take(&m));
    assert_int_equal(m.cap, 0);
    assert_int_equal(dls_map_count(&m), 0);
}

/* String keys are compared by their text, not their address. */
static void string_keys_compare_by_text(void **state)
{
    (void)state;
    typedef struct {
        const char *name;
        int value;
    } named;
    static named slots[32];
    dls_map m = DLS_MAP_OVER(DLS_MAP_STRINGS, slots);
    char a[16] = "cuLaunchKernel", b[16] = "cuLaunchKernel", c[16] = "cuLaunchKernelX";
    ((named *)dls_map_put(&m, (uintptr_t)a))->value = 1;
    named *found = dls_map_get(&m, (uintptr_t)b);
    assert_non_null(found);
    assert_ptr_equal(found->name, a); /* the key stored is the one put */
    assert_int_equal(found->value, 1);
    assert_null(dls_map_get(&m, (uintptr_t)c));
    ((named *)dls_map_put(&m, (uintptr_t)c))->value = 2;
    dls_map_remove_at(&m, dls_map_index(&m, (uintptr_t)b));
    assert_null(dls_map_get(&m, (uintptr_t)a));
    assert_int_equal(((named *)dls_map_get(&m, (uintptr_t)c))->value, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys_are_found_changed_and_removed),
        cmocka_unit_test(a_chain_that_wraps_survives_each_removal),
        cmocka_unit_test(a_full_table_refuses_new_keys_only),
        cmocka_unit_test(random_operations_match_a_plain_list),
        cmocka_unit_test(string_keys_compare_by_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
