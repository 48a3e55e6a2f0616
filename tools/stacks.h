/* The stacks of race records as `dlsync report` shows them (text, --json and --html): the
 * logged frames, each native frame the symbolizer resolved (symbolize.h) replaced by its source
 * frames, `FUNCTION (FILE:LINE) in LIBRARY`, preceded by the functions inlined there, `FUNCTION
 * (FILE:LINE) inlined in LIBRARY`; an unresolved native frame keeps its logged text
 * (`function+0xOFF (library)`), and a Python frame its `function (file:line)`. */
#ifndef DLT_STACKS_H
#define DLT_STACKS_H

#include <stddef.h>

#include "logread.h"
#include "symbolize.h"

typedef struct {
    char *text;   /* the frame as shown (malloc'd) */
    int python;   /* a Python frame */
    int resolved; /* a native frame given its source line */
    int inlined;  /* a function inlined into the frame that follows */
} dlt_shown_frame;

typedef struct {
    dlt_shown_frame *f;
    size_t n;
} dlt_shown_stack;

/* Asks sym for every native frame of both sides of every race record of set. Returns 0, or -1
 * when memory runs out. */
int dlt_stacks_want(const dlt_log_set *set, dlt_symbolizer *sym);

/* The stack of `side` (a race record's producer or consumer: its "stack", "native" and
 * "python") into *out, in the log's order: the native frames, innermost first, then the Python
 * frames; sym NULL leaves the native frames as logged. A native frame is told apart by the
 * side's "native" list (its first entries are native), or in a log of an older dlsync by not
 * being one of its "python" frames. Returns 0, or -1 when memory runs out (*out is then empty). */
int dlt_stack_shown(const dlt_json_value *side, const dlt_symbolizer *sym, dlt_shown_stack *out);

/* Frees what dlt_stack_shown filled and empties *s. */
void dlt_shown_stack_free(dlt_shown_stack *s);

#endif
