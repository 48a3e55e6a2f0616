/* The `fix:` line of race reports: what to change, tailored to how the tensor was exchanged and
 * to the race's own names (advice.def holds every text).
 *
 * Placeholders in the texts: {fw} the producer's framework, {symbol} its export, {pop} and {cop}
 * the producer's and the consumer's operation, {ps} and {cs} their streams as C expressions
 * (cudaStreamLegacy, cudaStreamPerThread, (cudaStream_t)0x...), {csarg} the consumer's stream as
 * a dlsync.h stream value (DLSYNC_STREAM_LEGACY, DLSYNC_STREAM_PER_THREAD, (intptr_t)0x...),
 * {cspy} the same as a Python integer (1, 2, 0x...). A name the race does not know is written as
 * what it stands for ("the producer's operation"). */
#ifndef DLS_ADVICE_H
#define DLS_ADVICE_H

#include <stddef.h>

/* How a tensor crossed between frameworks (the value of dls_exchange.path; 0 is NATIVE). */
typedef enum {
#define DLS_ADVICE_PATH(id, fix, title, text) DLS_XPATH_##id,
#define DLS_ADVICE_KIND(kind, fix, title, text)
#include "advice.def"
#undef DLS_ADVICE_PATH
#undef DLS_ADVICE_KIND
    DLS_XPATH_N_
} dls_xpath;

struct dls_race;

/* Writes r's fix line (no "fix: " prefix, no newline) into buf (n bytes, always NUL-terminated
 * when n > 0, cut when it does not fit) and returns the fix's name (a static string). */
const char *dls_advice(const struct dls_race *r, char *buf, size_t n);

#endif
