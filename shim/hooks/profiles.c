/* Profile table and the text-row parser (see profiles.h). Depends on libc only. */
#include "profiles.h"

#include "../common/compiler.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const dls_profile g_builtin[] = {
#define DLS_PROFILE(sym, fw, role, where, idx, ver, disp) \
    {#sym, fw, DLS_ROLE_##role, DLS_WHERE_##where, idx, ver, disp, DLS_XPATH_NATIVE, 1},
#include "profiles.def"
#undef DLS_PROFILE
};

const dls_profile *dls_profiles_builtin(size_t *n)
{
    *n = sizeof g_builtin / sizeof *g_builtin;
    return g_builtin;
}

const char *dls_profile_name(const dls_profile *p)
{
    return p->display[0] ? p->display : p->symbol;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) DLS_PRINTF(3, 4);

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Splits the next blank-separated field off *p; returns its start and length (0 at the end). */
static const char *next_field(const char **p, size_t *len)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    const char *e = s;
    while (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n' && *e != '#')
        e++;
    *len = (size_t)(e - s);
    *p = e;
    return s;
}

static int field_is(const char *f, size_t len, const char *word)
{
    return strlen(word) == len && strncmp(f, word, len) == 0;
}

/* A symbol must be a linkable identifier: letters, digits, '_', '.', '$'; not starting with a digit. */
static int valid_symbol(const char *s, size_t len)
{
    if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '$'))
            return 0;
    }
    return 1;
}

static int parse_where(const char *f, size_t len, dls_profile *r, char *err, size_t errlen)
{
    if (field_is(f, len, "ret")) {
        r->where = DLS_WHERE_RET;
        r->index = 0;
        return 0;
    }
    const char *digits;
    if (len > 4 && strncmp(f, "out:", 4) == 0)
        r->where = DLS_WHERE_OUT;
    else if (len > 4 && strncmp(f, "arg:", 4) == 0)
        r->where = DLS_WHERE_ARG;
    else if (len > 5 && strncmp(f, "fill:", 5) == 0)
        r->where = DLS_WHERE_FILL;
    else
        return fail(err, errlen, "tensor location '%.*s' is not ret, out:N, arg:N or fill:N", (int)len, f);
    digits = strchr(f, ':') + 1;
    if ((size_t)(digits - f) + 1 != len || digits[0] < '0' || digits[0] > '0' + DLS_PROFILE_MAX_ARG)
        return fail(err, errlen, "argument index in '%.*s' must be 0..%d (register arguments only)", (int)len, f,
                    DLS_PROFILE_MAX_ARG);
    r->index = digits[0] - '0';
    return 0;
}

int dls_profile_parse_line(const char *line, dls_profile *out, char *err, size_t errlen)
{
    if (errlen > 0)
        err[0] = '\0';
    const char *p = line;
    const char *f[5];
    size_t len[5];
    int nf = 0;
    for (;;) {
        size_t l;
        const char *s = next_field(&p, &l);
        if (l == 0)
            break;
        if (nf == 5)
            return fail(err, errlen, "more than 5 fields (symbol framework role location version)");
        f[nf] = s;
        len[nf++] = l;
    }
    if (nf == 0)
        return 0;
    if (nf != 5)
        return fail(err, errlen,
                    "expected 5 fields (symbol framework export|import ret|out:N|arg:N|fill:N v0|v1), got %d", nf);
    dls_profile r;
    memset(&r, 0, sizeof r);
    if (!valid_symbol(f[0], len[0]))
        return fail(err, errlen, "'%.*s' is not a symbol name", (int)len[0], f[0]);
    if (len[0] >= sizeof r.symbol)
        return fail(err, errlen, "symbol longer than %zu characters", sizeof r.symbol - 1);
    memcpy(r.symbol, f[0], len[0]);
    if (len[1] >= sizeof r.framework)
        return fail(err, errlen, "framework name longer than %zu characters", sizeof r.framework - 1);
    memcpy(r.framework, f[1], len[1]);
    if (field_is(f[2], len[2], "export"))
        r.role = DLS_ROLE_EXPORT;
    else if (field_is(f[2], len[2], "import"))
        r.role = DLS_ROLE_IMPORT;
    else
        return fail(err, errlen, "role '%.*s' is not export or import", (int)len[2], f[2]);
    if (parse_where(f[3], len[3], &r, err, errlen) != 0)
        return -1;
    if (field_is(f[4], len[4], "v0"))
        r.versioned = 0;
    else if (field_is(f[4], len[4], "v1"))
        r.versioned = 1;
    else
        return fail(err, errlen, "version '%.*s' is not v0 or v1", (int)len[4], f[4]);
    if (r.role == DLS_ROLE_IMPORT && r.where != DLS_WHERE_ARG)
        return fail(err, errlen, "an import takes its tensor as an argument (arg:N)");
    if (r.role == DLS_ROLE_EXPORT && r.where == DLS_WHERE_ARG)
        return fail(err, errlen,
                    "an export hands its tensor out as the return value (ret), an out-parameter (out:N) "
                    "or a DLTensor it fills (fill:N)");
    if (r.where == DLS_WHERE_FILL && r.versioned)
        return fail(err, errlen, "a filled DLTensor has no version: fill:N rows are v0");
    *out = r;
    return 1;
}

int dls_profile_format_line(const dls_profile *p, char *buf, size_t n)
{
    char where[8];
    if (p->where == DLS_WHERE_RET)
        snprintf(where, sizeof where, "ret");
    else
        snprintf(where, sizeof where, "%s:%d",
                 p->where == DLS_WHERE_OUT    ? "out"
                 : p->where == DLS_WHERE_FILL ? "fill"
                                              : "arg",
                 p->index);
    return snprintf(buf, n, "%s %s %s %s v%d", p->symbol, p->framework,
                    p->role == DLS_ROLE_EXPORT ? "export" : "import", where, p->versioned ? 1 : 0);
}
