/* Reference-counted vector clocks (see hb_clock.h). */
#include "hb_clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dls_hb_clk_own(dls_hb_clk **c, uint32_t need)
{
    dls_hb_clk *old = *c;
    if (old && old->refs == 1 && old->cap >= need)
        return 0;
    uint32_t cap = old && old->cap > need ? old->cap : need;
    if (cap < 8)
        cap = 8;
    dls_hb_clk *n = malloc(sizeof *n + (size_t)cap * sizeof n->v[0]);
    if (!n)
        return ENOMEM;
    n->refs = 1;
    n->cap = cap;
    n->pad = 0;
    n->len = old ? old->len : 0;
    if (old)
        memcpy(n->v, old->v, (size_t)old->len * sizeof n->v[0]);
    dls_hb_clk_release(old);
    *c = n;
    return 0;
}

dls_hb_clk *dls_hb_clk_share(dls_hb_clk *c)
{
    if (c)
        c->refs++;
    return c;
}

void dls_hb_clk_release(dls_hb_clk *c)
{
    if (c && --c->refs == 0)
        free(c);
}

int dls_hb_clk_join(dls_hb_clk *dst, const dls_hb_clk *src)
{
    if (!src)
        return 0;
    int changed = 0;
    uint32_t common = src->len < dst->len ? src->len : dst->len;
    for (uint32_t i = 0; i < common; i++)
        if (src->v[i] > dst->v[i]) {
            dst->v[i] = src->v[i];
            changed = 1;
        }
    if (src->len > dst->len) {
        memcpy(dst->v + dst->len, src->v + dst->len, (size_t)(src->len - dst->len) * sizeof dst->v[0]);
        dst->len = src->len;
        changed = 1;
    }
    return changed;
}

int dls_hb_clk_raise(dls_hb_clk *dst, uint32_t slot, uint64_t pos)
{
    if (slot >= dst->len) {
        if (pos == 0)
            return 0;
        memset(dst->v + dst->len, 0, (size_t)(slot + 1 - dst->len) * sizeof dst->v[0]);
        dst->len = slot + 1;
    }
    if (pos <= dst->v[slot])
        return 0;
    dst->v[slot] = pos;
    return 1;
}

void dls_hb_clk_meet(dls_hb_clk *dst, const dls_hb_clk *src)
{
    uint32_t common = src && src->len < dst->len ? src->len : src ? dst->len : 0;
    for (uint32_t i = 0; i < common; i++)
        if (src->v[i] < dst->v[i])
            dst->v[i] = src->v[i];
    dst->len = common;
}
