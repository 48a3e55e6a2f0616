/* Stack walking with per-thread cached unwind rules from .eh_frame (see unwind.h). */
#include "unwind.h"

#if defined(__x86_64__)

#include "../common/compiler.h"
#include "../common/thread_block.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The unwinder's lookup of the frame description entry covering pc, with the bases its pointer
 * encodings are relative to: libgcc_s's _Unwind_Find_FDE (exported since GCC 3.0), looked up
 * once, from the libgcc_s that backtrace(3) would load (the shim does not link it). */
struct dwarf_eh_bases {
    void *tbase;
    void *dbase;
    void *func;
};
typedef const void *(*find_fde_fn)(void *pc, struct dwarf_eh_bases *bases);
static find_fde_fn g_find_fde;
static pthread_once_t g_find_once = PTHREAD_ONCE_INIT;

static void find_unwinder(void)
{
    void *h = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        *(void **)&g_find_fde = dlsym(h, "_Unwind_Find_FDE");
}

/* DWARF register numbers of x86-64. */
enum { REG_BP = 6, REG_SP = 7 };

/* Where a frame's canonical frame address (CFA: the caller's stack pointer) is: the stack or
 * frame pointer plus an offset, or the value saved at the frame pointer plus an offset. */
enum { CFA_SP, CFA_BP, CFA_AT_BP };
/* Where the caller's frame pointer is: unchanged, saved at the CFA plus an offset, saved at the
 * frame pointer plus an offset. */
enum { BP_SAME, BP_AT_CFA, BP_AT_BP };
/* What a rule tells: nothing this walk can use, a frame to step, the outermost frame. */
enum { RULE_UNKNOWN, RULE_STEP, RULE_LAST };

typedef struct {
    uint8_t kind, cfa, bp;
    int32_t cfa_off, ra_off, bp_off;
} rule;

/* A thread's walker: rules by lookup address (open addressing over PROBE slots from the
 * address's hash; a miss with all of them taken replaces one), and its stack's bounds. */
#define RULES 1024
#define PROBE 4
typedef struct {
    struct {
        uintptr_t pc; /* 0: empty */
        rule r;
    } rules[RULES];
    uintptr_t lo, hi;        /* the stack's bounds; hi 0: not asked yet */
    int no_bounds;           /* the bounds could not be had */
    unsigned long long subs; /* the loader's unload count the rules were made under */
    unsigned unloads;        /* g_unloads as the rules were made */
    unsigned walks;          /* walks made: every SUBS_EVERY-th one asks the loader */
    unsigned long found;     /* rules found in the unwind tables (dls_unwind_rules_found_for_tests) */
} walker;

/* Unloads told by dls_unwind_unloaded (the shim's dlclose). The loader's own count is read at
 * one walk in SUBS_EVERY on each thread, for an unload made around the shim's dlclose: asking it
 * at every walk took a lock and a fifth of a walk. */
static atomic_uint g_unloads;
#define SUBS_EVERY 64

static dls_thread_block g_block = DLS_THREAD_BLOCK_INIT(sizeof(walker));
static __thread walker *t_walker;

static const uint8_t *uleb(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; p && p < end; shift += 7) {
        uint8_t b = *p++;
        if (shift < 64)
            r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return p;
        }
    }
    return NULL;
}

static const uint8_t *sleb(const uint8_t *p, const uint8_t *end, int64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    for (; p && p < end;) {
        uint8_t b = *p++;
        if (shift < 64)
            r |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40))
                r |= ~(uint64_t)0 << shift;
            *v = (int64_t)r;
            return p;
        }
    }
    return NULL;
}

/* Reads a pointer of encoding enc (DW_EH_PE_*) at p into *v; the position after it, or NULL for
 * an encoding this walk does not read. */
static const uint8_t *encoded(const uint8_t *p, const uint8_t *end, uint8_t enc, const struct dwarf_eh_bases *b,
                              uintptr_t *v)
{
    uintptr_t base = 0;
    switch (enc & 0x70) {
    case 0x00:
        break;
    case 0x10:
        base = (uintptr_t)p;
        break;
    case 0x20:
        base = (uintptr_t)b->tbase;
        break;
    case 0x30:
        base = (uintptr_t)b->dbase;
        break;
    case 0x40:
        base = (uintptr_t)b->func;
        break;
    default:
        return NULL;
    }
    static const uint8_t size[16] = {
        [0x00] = 8, [0x02] = 2, [0x03] = 4, [0x04] = 8, [0x0a] = 2, [0x0b] = 4, [0x0c] = 8};
    size_t k = size[enc & 0x0f];
    uint64_t u = 0;
    int64_t s = 0;
    if (k > (size_t)(end - p))
        return NULL;
    if (k)
        memcpy(&u, p, k); /* little-endian */
    switch (enc & 0x0f) {
    case 0x00:
    case 0x02:
    case 0x03:
    case 0x04:
    case 0x0c:
        break;
    case 0x01:
        p = uleb(p, end, &u);
        break;
    case 0x09:
        p = sleb(p, end, &s);
        u = (uint64_t)s;
        break;
    case 0x0a:
        u = (uint64_t)(int64_t)(int16_t)u;
        break;
    case 0x0b:
        u = (uint64_t)(int64_t)(int32_t)u;
        break;
    default:
        return NULL;
    }
    *v = base + (uintptr_t)u;
    return p ? p + k : NULL;
}

/* A length-prefixed entry of .eh_frame at p: its body (after the length) in *body, its end. */
static const uint8_t *entry_end(const uint8_t *p, const uint8_t **body)
{
    uint32_t len32;
    memcpy(&len32, p, 4);
    if (len32 == 0xffffffffu)
        return NULL; /* the 64-bit format: not produced for .eh_frame on x86-64 */
    *body = p + 4;
    return p + 4 + len32;
}

/* What a CIE says that its FDEs need. */
typedef struct {
    uint64_t code_align, ra_reg;
    int64_t data_align;
    uint8_t fde_enc;
    int z; /* FDEs carry augmentation data */
    const uint8_t *insns, *end;
} cie;

/* Reads the CIE at p; 0, or -1 when it is not one this walk reads (a signal frame's among them). */
static int read_cie(const uint8_t *p, const struct dwarf_eh_bases *b, cie *c)
{
    const uint8_t *end = entry_end(p, &p);
    uint32_t id;
    if (!end)
        return -1;
    memcpy(&id, p, 4);
    if (id != 0)
        return -1;
    p += 4;
    uint8_t version = *p++;
    const char *aug = (const char *)p;
    p += strnlen(aug, (size_t)(end - p)) + 1;
    if (p >= end || (aug[0] && aug[0] != 'z'))
        return -1;
    p = uleb(p, end, &c->code_align);
    p = sleb(p, end, &c->data_align);
    if (!p || p >= end)
        return -1;
    if (version == 1)
        c->ra_reg = *p++;
    else
        p = uleb(p, end, &c->ra_reg);
    c->fde_enc = 0;
    c->z = aug[0] == 'z';
    const uint8_t *after = NULL;
    uint64_t len = 0;
    if (c->z) {
        p = uleb(p, end, &len);
        after = p ? p + len : NULL;
    }
    for (const char *a = aug + 1; p && *a && p < end; a++) {
        uintptr_t skipped;
        if (*a == 'R')
            c->fde_enc = *p++;
        else if (*a == 'P') {
            uint8_t enc = *p++;
            p = encoded(p, end, enc & 0x7f, b, &skipped);
        } else if (*a == 'L')
            p++;
        else
            return -1; /* 'S' (a signal frame) and the unknown */
    }
    if (!c->z)
        after = p;
    if (!p || !after || after > end)
        return -1;
    c->insns = after;
    c->end = end;
    return 0;
}

/* The register rules a CFA program builds that the walk needs. */
enum { R_SAME, R_AT_CFA, R_AT_BP, R_UNDEFINED, R_OTHER };
typedef struct {
    uint64_t cfa_reg;
    int64_t cfa_off;
    int cfa_at; /* CFA = *(cfa_reg + cfa_off) */
    int cfa_other;
    int ra, bp; /* R_* */
    int64_t ra_off, bp_off;
} row;

/* Sets the rule of register reg in r (only the frame pointer and the return address matter). */
static void set_reg(row *r, uint64_t reg, uint64_t ra_reg, int how, int64_t off)
{
    if (reg == ra_reg) {
        r->ra = how;
        r->ra_off = off;
    } else if (reg == REG_BP) {
        r->bp = how;
        r->bp_off = off;
    }
}

/* A DWARF expression of len bytes at p that is "DW_OP_breg6 k" (deref 0) or "DW_OP_breg6 k;
 * DW_OP_deref" (deref 1): 1 with k in *k, else 0. */
static int bp_expression(const uint8_t *p, uint64_t len, int deref, int64_t *k)
{
    const uint8_t *end = p + len, *q;
    if (len < 2 || p[0] != 0x76 || !(q = sleb(p + 1, end, k)))
        return 0;
    return deref ? q + 1 == end && *q == 0x06 : q == end;
}

/* Runs the CFA program [p, end) of an entry from location loc up to target into *r (init: the
 * CIE's row, for DW_CFA_restore); 0, or -1 for an instruction this walk does not know. */
static int run(const uint8_t *p, const uint8_t *end, const cie *c, const struct dwarf_eh_bases *b, uintptr_t loc,
               uintptr_t target, row *r, const row *init)
{
    row stack[8];
    int depth = 0;
    while (p && p < end) {
        uint8_t op = *p++;
        uint64_t reg = op & 0x3f, u = 0, len = 0;
        int64_t s = 0;
        uintptr_t to;
        switch (op & 0xc0) {
        case 0x40:
            loc += reg * c->code_align;
            if (loc > target)
                return 0;
            continue;
        case 0x80:
            p = uleb(p, end, &u);
            set_reg(r, reg, c->ra_reg, R_AT_CFA, (int64_t)u * c->data_align);
            continue;
        case 0xc0:
            set_reg(r, reg, c->ra_reg, reg == c->ra_reg ? init->ra : init->bp,
                    reg == c->ra_reg ? init->ra_off : init->bp_off);
            continue;
        }
        switch (op) {
        case 0x00: /* nop */
            break;
        case 0x01: /* set_loc */
            p = encoded(p, end, c->fde_enc, b, &to);
            if (p && (loc = to) > target)
                return 0;
            break;
        case 0x02: /* advance_loc1 */
        case 0x03: /* advance_loc2 */
        case 0x04: /* advance_loc4 */ {
            size_t k = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
            if ((size_t)(end - p) < k)
                return -1;
            uint32_t d = 0;
            memcpy(&d, p, k); /* little-endian */
            p += k;
            loc += d * c->code_align;
            if (loc > target)
                return 0;
            break;
        }
        case 0x05: /* offset_extended */
            p = uleb(uleb(p, end, &reg), end, &u);
            set_reg(r, reg, c->ra_reg, R_AT_CFA, (int64_t)u * c->data_align);
            break;
        case 0x06: /* restore_extended */
            p = uleb(p, end, &reg);
            set_reg(r, reg, c->ra_reg, reg == c->ra_reg ? init->ra : init->bp,
                    reg == c->ra_reg ? init->ra_off : init->bp_off);
            break;
        case 0x07: /* undefined */
            p = uleb(p, end, &reg);
            set_reg(r, reg, c->ra_reg, R_UNDEFINED, 0);
            break;
        case 0x08: /* same_value */
            p = uleb(p, end, &reg);
            set_reg(r, reg, c->ra_reg, R_SAME, 0);
            break;
        case 0x09: /* register */
            p = uleb(uleb(p, end, &reg), end, &u);
            set_reg(r, reg, c->ra_reg, R_OTHER, 0);
            break;
        case 0x0a: /* remember_state */
            if (depth == 8)
                return -1;
            stack[depth++] = *r;
            break;
        case 0x0b: /* restore_state */
            if (!depth)
                return -1;
            *r = stack[--depth];
            break;
        case 0x0c: /* def_cfa */
            p = uleb(uleb(p, end, &r->cfa_reg), end, &u);
            r->cfa_off = (int64_t)u;
            r->cfa_at = r->cfa_other = 0;
            break;
        case 0x0d: /* def_cfa_register */
            p = uleb(p, end, &r->cfa_reg);
            r->cfa_at = r->cfa_other = 0;
            break;
        case 0x0e: /* def_cfa_offset */
            p = uleb(p, end, &u);
            r->cfa_off = (int64_t)u;
            break;
        case 0x0f: /* def_cfa_expression */
            p = uleb(p, end, &len);
            if (!p || len > (uint64_t)(end - p))
                return -1;
            r->cfa_at = bp_expression(p, len, 1, &r->cfa_off);
            r->cfa_other = !r->cfa_at;
            r->cfa_reg = REG_BP;
            p += len;
            break;
        case 0x10: /* expression */
            p = uleb(uleb(p, end, &reg), end, &len);
            if (!p || len > (uint64_t)(end - p))
                return -1;
            set_reg(r, reg, c->ra_reg, bp_expression(p, len, 0, &s) ? R_AT_BP : R_OTHER, s);
            p += len;
            break;
        case 0x11: /* offset_extended_sf */
            p = sleb(uleb(p, end, &reg), end, &s);
            set_reg(r, reg, c->ra_reg, R_AT_CFA, s * c->data_align);
            break;
        case 0x12: /* def_cfa_sf */
            p = sleb(uleb(p, end, &r->cfa_reg), end, &s);
            r->cfa_off = s * c->data_align;
            r->cfa_at = r->cfa_other = 0;
            break;
        case 0x13: /* def_cfa_offset_sf */
            p = sleb(p, end, &s);
            r->cfa_off = s * c->data_align;
            break;
        case 0x14: /* val_offset */
            p = uleb(uleb(p, end, &reg), end, &u);
            set_reg(r, reg, c->ra_reg, R_OTHER, 0);
            break;
        case 0x15: /* val_offset_sf */
            p = sleb(uleb(p, end, &reg), end, &s);
            set_reg(r, reg, c->ra_reg, R_OTHER, 0);
            break;
        case 0x16: /* val_expression */
            p = uleb(uleb(p, end, &reg), end, &len);
            if (!p || len > (uint64_t)(end - p))
                return -1;
            set_reg(r, reg, c->ra_reg, R_OTHER, 0);
            p += len;
            break;
        case 0x2e: /* GNU_args_size */
            p = uleb(p, end, &u);
            break;
        case 0x2f: /* GNU_negative_offset_extended */
            p = uleb(uleb(p, end, &reg), end, &u);
            set_reg(r, reg, c->ra_reg, R_AT_CFA, -(int64_t)u * c->data_align);
            break;
        default:
            return -1;
        }
    }
    return p ? 0 : -1;
}

/* The rule of the frame whose lookup address is pc, from its FDE. */
static rule rule_for(uintptr_t pc)
{
    rule out = {.kind = RULE_UNKNOWN};
    struct dwarf_eh_bases b;
    const uint8_t *fde = g_find_fde((void *)pc, &b), *p;
    cie c;
    if (!fde)
        return out;
    const uint8_t *end = entry_end(fde, &p);
    if (!end)
        return out;
    uint32_t back;
    memcpy(&back, p, 4);
    if (!back || read_cie(p - back, &b, &c) != 0)
        return out;
    p += 4;
    uintptr_t begin, range;
    p = encoded(p, end, c.fde_enc, &b, &begin);
    p = p ? encoded(p, end, c.fde_enc & 0x0f, &b, &range) : NULL;
    uint64_t aug = 0;
    if (p && c.z)
        p = uleb(p, end, &aug);
    if (!p || aug > (uint64_t)(end - p) || pc < begin || pc - begin >= range)
        return out;
    p += aug;
    row init = {.cfa_reg = REG_SP, .ra = R_SAME, .bp = R_SAME}, r;
    if (run(c.insns, c.end, &c, &b, begin, (uintptr_t)-1, &init, &init) != 0)
        return out;
    r = init;
    if (run(p, end, &c, &b, begin, pc, &r, &init) != 0)
        return out;
    if (r.ra == R_UNDEFINED) {
        out.kind = RULE_LAST;
        return out;
    }
    int bp = r.bp == R_SAME ? BP_SAME : r.bp == R_AT_CFA ? BP_AT_CFA : r.bp == R_AT_BP ? BP_AT_BP : -1;
    int cfa = r.cfa_other           ? -1
              : r.cfa_at            ? CFA_AT_BP
              : r.cfa_reg == REG_SP ? CFA_SP
              : r.cfa_reg == REG_BP ? CFA_BP
                                    : -1;
    if (r.ra != R_AT_CFA || bp < 0 || cfa < 0 || r.cfa_off != (int32_t)r.cfa_off || r.ra_off != (int32_t)r.ra_off ||
        r.bp_off != (int32_t)r.bp_off)
        return out;
    out = (rule){RULE_STEP, (uint8_t)cfa, (uint8_t)bp, (int32_t)r.cfa_off, (int32_t)r.ra_off, (int32_t)r.bp_off};
    return out;
}

/* dl_iterate_phdr callback: the loader's count of objects unloaded so far. */
static int read_subs(struct dl_phdr_info *info, size_t size, void *out)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)out = info->dlpi_subs;
    return 1;
}

/* The calling thread's walker with its stack bounds and rules current; NULL when it has none. */
static walker *walker_self(void) DLS_UNLOCKED
{
    walker *w = t_walker; /* made only once the unwinder was found */
    if (!w) {
        pthread_once(&g_find_once, find_unwinder); /* a loader call: the callers hold no lock */
        if (!g_find_fde)
            return NULL;
        w = dls_thread_block_new(&g_block, (void **)&t_walker);
    }
    if (!w || w->no_bounds)
        return NULL;
    if (!w->hi) {
        pthread_attr_t attr;
        void *addr;
        size_t size;
        w->no_bounds = 1;
        if (pthread_getattr_np(pthread_self(), &attr) != 0)
            return NULL;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size) {
            w->lo = (uintptr_t)addr;
            w->hi = (uintptr_t)addr + size;
            w->no_bounds = 0;
        }
        pthread_attr_destroy(&attr);
        if (w->no_bounds)
            return NULL;
    }
    unsigned unloads = atomic_load_explicit(&g_unloads, memory_order_acquire);
    unsigned long long subs = w->subs;
    if (w->walks++ % SUBS_EVERY == 0)
        dl_iterate_phdr(read_subs, &subs);
    if (subs != w->subs || unloads != w->unloads) { /* an object was unloaded: its addresses may hold
                                                     * another's code */
        memset(w->rules, 0, sizeof w->rules);
        w->subs = subs;
        w->unloads = unloads;
    }
    return w;
}

/* The rule of lookup address pc, from the walker's rules or found and kept there. */
static const rule *rule_of(walker *w, uintptr_t pc)
{
    unsigned h = (unsigned)(((uint64_t)pc * 0x9e3779b97f4a7c15ull) >> 54), i = h % RULES;
    for (unsigned k = 0; k < PROBE; k++) {
        unsigned j = (h + k) % RULES;
        if (w->rules[j].pc == pc)
            return &w->rules[j].r;
        if (!w->rules[j].pc) {
            i = j;
            break;
        }
        if (k == PROBE - 1)
            i = (h + (unsigned)(pc >> 4) % PROBE) % RULES; /* all taken: replace one */
    }
    w->rules[i].r = rule_for(pc);
    w->found++;
    w->rules[i].pc = pc;
    return &w->rules[i].r;
}

void dls_unwind_unloaded(void)
{
    atomic_fetch_add_explicit(&g_unloads, 1, memory_order_release);
}

unsigned long dls_unwind_rules_found_for_tests(void)
{
    return t_walker ? t_walker->found : 0;
}

/* Not instrumented: the reads of other frames' slots are checked against the stack above. */
__attribute__((noinline, no_sanitize_address)) int dls_unwind(void **pc, int max)
{
    walker *w = walker_self();
    if (!w)
        return -1;
    uintptr_t ip, sp, bp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
    if (sp < w->lo || sp >= w->hi)
        return -1;        /* a stack of its own (sigaltstack, a coroutine's) */
    uintptr_t floor = sp; /* every read lies in [floor, hi): the part of the stack in use */
    int n = 0;
    for (int first = 1; n < max; first = 0) {
        const rule *r = rule_of(w, first ? ip : ip - 1);
        if (r->kind != RULE_STEP)
            break;
        uintptr_t cfa = r->cfa == CFA_SP ? sp + (intptr_t)r->cfa_off : bp + (intptr_t)r->cfa_off;
        if (r->cfa == CFA_AT_BP) {
            if (cfa < floor || cfa > w->hi - 8 || (cfa & 7))
                break;
            cfa = *(const uintptr_t *)cfa;
        }
        uintptr_t ra_at = cfa + (intptr_t)r->ra_off;
        uintptr_t bp_at = r->bp == BP_AT_CFA ? cfa + (intptr_t)r->bp_off : bp + (intptr_t)r->bp_off;
        if (cfa <= sp || cfa > w->hi || ra_at < floor || ra_at > w->hi - 8 || (ra_at & 7))
            break;
        if (r->bp != BP_SAME && (bp_at < floor || bp_at > w->hi - 8 || (bp_at & 7)))
            break;
        uintptr_t ra = *(const uintptr_t *)ra_at;
        if (r->bp != BP_SAME)
            bp = *(const uintptr_t *)bp_at;
        if (!ra)
            break;
        pc[n++] = (void *)ra;
        ip = ra;
        sp = cfa;
    }
    return n ? n : -1;
}

#else

void dls_unwind_unloaded(void)
{
}

unsigned long dls_unwind_rules_found_for_tests(void)
{
    return 0;
}

int dls_unwind(void **pc, int max)
{
    (void)pc;
    (void)max;
    return -1;
}

#endif
