/* Lookup of one row of the built-in profile table by exported symbol, for the unit tests that
 * exercise those rows (test_profiles, test_hooks_exchange). */
#ifndef TEST_PROFILE_FIND_H
#define TEST_PROFILE_FIND_H

#include <string.h>

#include "hooks/profiles.h"

/* The built-in row whose symbol is `symbol`, or NULL when there is none. */
static const dls_profile *builtin_profile(const char *symbol)
{
    size_t n;
    const dls_profile *t = dls_profiles_builtin(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].symbol, symbol) == 0)
            return &t[i];
    return NULL;
}

#endif
