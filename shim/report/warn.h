/* One-line warnings on stderr, each printed at most once per process.
 *
 * The shim runs inside other people's programs: it must say clearly what it could not do, once,
 * and never more. Every warning is prefixed "dlsync: warning: ". Thread-safe; allocates only a
 * copy of each new key; never fails. */
#ifndef DLS_WARN_H
#define DLS_WARN_H

#include "../common/compiler.h"

/* Prints the formatted warning the first time `key` is seen (keys are compared as whole strings;
 * any number of them is remembered, only a key that could not be stored for lack of memory may
 * print again). Returns 1 when it counted as new (printed when stderr is still the program's,
 * see common/ownfd.h), 0 when the key had already been warned about. */
int dls_warn_once(const char *key, const char *fmt, ...) DLS_PRINTF(2, 3);

/* Tests only: forget which keys were warned about. */
void dls_warn_reset_for_tests(void);

#endif
