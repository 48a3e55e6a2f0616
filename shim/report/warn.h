/* One-line warnings on stderr, each printed at most once per process.
 *
 * The shim runs inside other people's programs: it must say clearly what it could not do, once,
 * and never more. Every warning is prefixed "dlsync: warning: ". Thread-safe; never allocates
 * on the calling path beyond the formatted line; never fails. */
#ifndef DLS_WARN_H
#define DLS_WARN_H

/* Prints the formatted warning the first time `key` is seen (keys are compared as strings; at
 * most 256 distinct keys are remembered, later ones always print). Returns 1 when it printed,
 * 0 when the key had already been warned about. */
int dls_warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Tests only: forget which keys were warned about. */
void dls_warn_reset_for_tests(void);

#endif
