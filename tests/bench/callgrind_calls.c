/* Calls out of some functions in a callgrind profile (see callgrind_calls.h). The format: a
 * function's block begins with `fn=`, a call in it with `cfn=` (the callee) and `calls=`, and the
 * line after `calls=` holds the call's position and its inclusive cost. Names are compressed:
 * `(id) name` the first time, `(id)` after. */
#include "callgrind_calls.h"

#include <stdlib.h>
#include <string.h>

/* What the profile's name ids say: for each id, whether its name begins with `from` (bit 0) or
 * with `skip` (bit 1). */
typedef struct {
    unsigned char *bits;
    size_t cap;
} names;

/* The bits of the name at p ("(id)" or "(id) name"), noting them when the name is given. */
static unsigned char name_bits(names *n, const char *p, const char *from, const char *skip)
{
    if (*p != '(')
        return 0;
    char *end;
    size_t id = strtoul(p + 1, &end, 10);
    if (*end != ')')
        return 0;
    if (id >= n->cap) {
        size_t cap = n->cap ? n->cap : 256;
        while (cap <= id)
            cap *= 2;
        unsigned char *more = realloc(n->bits, cap);
        if (!more)
            return 0;
        memset(more + n->cap, 0, cap - n->cap);
        n->bits = more;
        n->cap = cap;
    }
    if (end[1] == ' ') {
        const char *name = end + 2;
        n->bits[id] =
            (unsigned char)((strncmp(name, from, strlen(from)) == 0) | (strncmp(name, skip, strlen(skip)) == 0) << 1);
    }
    return n->bits[id];
}

double dls_cg_calls_out(const char *text, const char *from, const char *skip)
{
    names n = {0};
    double sum = 0;
    int in_from = 0, counted = 0, next_is_cost = 0;
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        if (next_is_cost) {
            const char *sp = strchr(line, ' ');
            if (sp && (!eol || sp < eol))
                sum += strtod(sp + 1, NULL);
            next_is_cost = 0;
        } else if (strncmp(line, "fn=", 3) == 0) {
            in_from = name_bits(&n, line + 3, from, skip) & 1;
        } else if (strncmp(line, "cfn=", 4) == 0) {
            unsigned char callee = name_bits(&n, line + 4, from, skip); /* noted whoever calls */
            counted = in_from && !(callee & 2);
        } else if (strncmp(line, "calls=", 6) == 0) {
            next_is_cost = counted;
            counted = 0;
        }
        line = eol ? eol + 1 : NULL;
    }
    free(n.bits);
    return sum;
}
