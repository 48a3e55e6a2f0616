/* dlsync scan: DLPack-related symbols of ELF objects, whether the built-in profiles wrap them,
 * whether preload interposition can reach them, and suggested profile rows for the rest. */
#include "commands.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>

#include "demangle.h"
#include "elfsyms.h"
#include "hooks/profiles.h"
#include "tally.h"

typedef struct {
    const dls_elf_sym *sym;
    char *demangled;
} row;

static int is_candidate(const char *name, void *ctx)
{
    (void)ctx;
    return strcasestr(name, "dlpack") || strstr(name, "DLManagedTensor") || strstr(name, "DLTensor");
}

static int is_wrapped(const char *name)
{
    size_t n;
    const dls_profile *p = dls_profiles_builtin(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].symbol, name) == 0)
            return 1;
    return 0;
}

/* Whether preload interposition can replace calls to s (see the help text for the words). */
static const char *reach(const dls_elf_info *info, const dls_elf_sym *s)
{
    if (!s->defined)
        return s->in_dynsym ? "reachable" : "symtab-only";
    if (info->is_exec)
        return "executable";
    if (s->dyn_defined)
        return s->visibility == STV_PROTECTED ? "protected" : "reachable";
    if (s->visibility == STV_HIDDEN)
        return "hidden";
    if (s->visibility == STV_INTERNAL)
        return "internal";
    if (s->bind == STB_LOCAL)
        return "local";
    return "symtab-only";
}

static int by_demangled(const void *a, const void *b)
{
    return strcmp(((const row *)a)->demangled, ((const row *)b)->demangled);
}

/* Framework name for suggestions: the object's file name without "lib" and extensions. */
static void framework_of(const char *path, char *buf, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "lib", 3) == 0 && base[3])
        base += 3;
    size_t len = strcspn(base, ".");
    if (len >= n)
        len = n - 1;
    memcpy(buf, base, len);
    buf[len] = '\0';
    if (!len)
        snprintf(buf, n, "unknown");
    for (char *c = buf; *c; c++)
        if (isspace((unsigned char)*c) || *c == '#')
            *c = '_';
}

/* Finds the top-level parameter k of a demangled signature that is a pointer to a DLPack managed
 * tensor: returns its index and sets *out_param (pointer to pointer) and *versioned; -1 if none. */
static int tensor_param(const char *d, int *out_param, int *versioned)
{
    size_t len = strlen(d);
    if (!len || d[len - 1] != ')')
        return -1;
    int depth = 0;
    size_t open = len;
    for (size_t i = len; i-- > 0;) {
        if (d[i] == ')' || d[i] == '>')
            depth++;
        else if (d[i] == '(' || d[i] == '<')
            depth--;
        if (depth == 0) {
            open = i;
            break;
        }
    }
    if (open == len)
        return -1;
    int index = 0;
    depth = 0;
    size_t start = open + 1;
    for (size_t i = open + 1; i < len; i++) {
        char c = d[i];
        if (c == '(' || c == '<')
            depth++;
        else if ((c == ')' || c == '>') && depth > 0)
            depth--;
        else if ((c == ',' && depth == 0) || i == len - 1) {
            char p[256];
            size_t pl = i - start < sizeof p - 1 ? i - start : sizeof p - 1;
            memcpy(p, d + start, pl);
            p[pl] = '\0';
            const char *t = strstr(p, "DLManagedTensor");
            if (t && !strchr(p, '<') && !strchr(p, '(')) {
                const char *stars = strchr(t, '*');
                *versioned = strstr(t, "Versioned") != NULL;
                *out_param = stars && strstr(stars, "**") != NULL;
                if (stars)
                    return index;
            }
            index++;
            start = i + 1;
        }
    }
    return -1;
}

/* Prints a suggested profile row for an unknown reachable candidate: live when the signature
 * shows where the tensor is, commented out when it is only guessed from the name. */
static void suggest(const char *path, const row *r, FILE *out)
{
    dls_profile p = {0};
    if (strlen(r->sym->name) >= sizeof p.symbol) {
        fprintf(out, "# %s: symbol name too long for a profile row\n", r->demangled);
        return;
    }
    snprintf(p.symbol, sizeof p.symbol, "%s", r->sym->name);
    framework_of(path, p.framework, sizeof p.framework);
    int out_param = 0, versioned = 0;
    int k = tensor_param(r->demangled, &out_param, &versioned);
    char lower[512];
    size_t i = 0;
    for (; r->sym->name[i] && i < sizeof lower - 1; i++)
        lower[i] = (char)tolower((unsigned char)r->sym->name[i]);
    lower[i] = '\0';
    int from = strstr(lower, "from") != NULL, to = strstr(lower, "todlpack") || strstr(lower, "to_dlpack");
    int evidence = k >= 0;
    if (evidence) {
        p.role = out_param ? DLS_ROLE_EXPORT : DLS_ROLE_IMPORT;
        p.where = out_param ? DLS_WHERE_OUT : DLS_WHERE_ARG;
        p.index = k;
        p.versioned = versioned;
        if (k > DLS_PROFILE_MAX_ARG) {
            fprintf(out, "# %s: the tensor is argument %d, past the %d register arguments a profile can name\n",
                    r->demangled, k, DLS_PROFILE_MAX_ARG + 1);
            return;
        }
    } else if (from != to) {
        p.role = from ? DLS_ROLE_IMPORT : DLS_ROLE_EXPORT;
        p.where = from ? DLS_WHERE_ARG : DLS_WHERE_RET;
        p.versioned = strstr(lower, "versioned") != NULL;
    } else {
        fprintf(out, "# %s: neither a to- nor a from-DLPack function by its name; no row suggested\n", r->demangled);
        return;
    }
    char line[512];
    dls_profile_format_line(&p, line, sizeof line);
    if (evidence)
        fprintf(out, "# %s: the signature shows the tensor at argument %d%s\n%s\n", r->demangled, k,
                strchr(r->demangled, ':') ? " (add 1 if it returns a class by value or is a member function)" : "",
                line);
    else
        fprintf(out, "# %s: guessed from the name only; check the declaration, then uncomment\n# %s\n", r->demangled,
                line);
}

static int scan_file(const char *path, dls_tally *seen, FILE *out, FILE *sugg)
{
    dls_elf_info info;
    char err[160];
    if (dls_elf_read(path, is_candidate, NULL, &info, err, sizeof err) != 0) {
        fprintf(stderr, "dlsync scan: %s: %s\n", path, err);
        return -1;
    }
    row *rows = calloc(info.n ? info.n : 1, sizeof *rows);
    int rc = rows ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < info.n; i++) {
        rows[i].sym = &info.syms[i];
        rows[i].demangled = dls_demangle(info.syms[i].name);
        if (!rows[i].demangled)
            rc = -1;
    }
    if (rc == 0) {
        qsort(rows, info.n, sizeof *rows, by_demangled);
        fprintf(out, "%s: %s%s, %zu DLPack-related symbol%s\n", path, info.is_exec ? "executable" : "shared object",
                info.symbolic ? " (linked -Bsymbolic: its own calls are bound inside it)" : "", info.n,
                info.n == 1 ? "" : "s");
        for (size_t i = 0; i < info.n; i++) {
            const dls_elf_sym *s = rows[i].sym;
            const char *where = reach(&info, s);
            int wrapped = is_wrapped(s->name);
            fprintf(out, "  %-3s  %-7s  %-11s  %s", s->defined ? "def" : "imp", wrapped ? "wrapped" : "-", where,
                    rows[i].demangled);
            if (strcmp(rows[i].demangled, s->name) != 0)
                fprintf(out, "  [%s]", s->name);
            fputc('\n', out);
            int fresh = 0;
            if (!wrapped && (strcmp(where, "reachable") == 0 || strcmp(where, "protected") == 0)) {
                if (!dls_tally_add(seen, s->name, &fresh))
                    rc = -1;
                else if (fresh)
                    suggest(path, &rows[i], sugg);
            }
        }
    }
    for (size_t i = 0; rows && i < info.n; i++)
        free(rows[i].demangled);
    free(rows);
    dls_elf_info_free(&info);
    if (rc != 0)
        fprintf(stderr, "dlsync scan: %s: out of memory\n", path);
    return rc;
}

int dls_cmd_scan(int argc, char **argv)
{
    int i = 1;
    if (i < argc && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)) {
        fputs(dls_usage_text, stdout);
        return 0;
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc) {
        fputs("dlsync scan: no FILE to scan\n(dlsync --help for usage)\n", stderr);
        return DLS_EXIT_USAGE;
    }
    /* Suggestions are collected apart and printed after all the listings. */
    char *sbuf = NULL;
    size_t slen = 0;
    FILE *sugg = open_memstream(&sbuf, &slen);
    if (!sugg) {
        fputs("dlsync scan: out of memory\n", stderr);
        return 1;
    }
    dls_tally seen = {0};
    int rc = 0;
    for (; i < argc; i++)
        if (scan_file(argv[i], &seen, stdout, sugg) != 0)
            rc = 1;
    fclose(sugg);
    if (slen)
        printf("\n# Suggested DLSYNC_PROFILES rows for reachable candidates no built-in profile wraps.\n"
               "# Row: <exported-symbol> <framework> <export|import> <ret|out:N|arg:N> <v0|v1>\n%s",
               sbuf);
    free(sbuf);
    dls_tally_free(&seen);
    return rc;
}
