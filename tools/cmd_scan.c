/* dlsync scan: DLPack-related symbols of ELF objects, whether the built-in profiles wrap them,
 * whether preload interposition can reach them, and suggested profile rows for the rest. */
#include "commands.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>

#include "demangle.h"
#include "elfsyms.h"
#include "hooks/profiles.h"
#include "tally.h"
#include "textesc.h"

typedef struct {
    const dlt_elf_sym *sym;
    char *demangled;
} row;

/* DLPack-related names, except Python module init functions (PyInit_dlpack is no exchange). */
static int is_candidate(const char *name, void *ctx)
{
    (void)ctx;
    if (strncmp(name, "PyInit_", 7) == 0)
        return 0;
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
static const char *reach(const dlt_elf_info *info, const dlt_elf_sym *s)
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

typedef enum { PARAM_MANAGED, PARAM_MANAGED_OUT, PARAM_DLTENSOR } param_kind;

/* Index of the '(' opening the parameter list of a demangled signature ending in ')'; 0 if none. */
static size_t params_open(const char *d, size_t len)
{
    if (!len || d[len - 1] != ')')
        return 0;
    int depth = 0;
    for (size_t i = len; i-- > 0;) {
        if (d[i] == ')' || d[i] == '>')
            depth++;
        else if (d[i] == '(' || d[i] == '<')
            depth--;
        if (depth == 0)
            return i;
    }
    return 0;
}

/* Finds the first top-level parameter of a demangled signature that is a pointer to a DLPack
 * managed tensor (or a pointer to one: an out-parameter) or to a bare DLTensor: returns its index
 * among the visible parameters and sets *kind and *versioned; -1 if none. */
static int tensor_param(const char *d, param_kind *kind, int *versioned)
{
    size_t len = strlen(d), open = params_open(d, len);
    if (!open)
        return -1;
    int index = 0, depth = 0;
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
            const char *m = strstr(p, "DLManagedTensor"), *t = strstr(p, "DLTensor");
            const char *stars = strchr(p, '*');
            if ((m || t) && stars && !strchr(p, '<') && !strchr(p, '(')) {
                *versioned = m && strstr(m, "Versioned") != NULL;
                *kind = !m ? PARAM_DLTENSOR : strstr(stars, "**") ? PARAM_MANAGED_OUT : PARAM_MANAGED;
                return index;
            }
            index++;
            start = i + 1;
        }
    }
    return -1;
}

/* What a C++ signature says about registers before the visible parameters: 1 when its return
 * type is shown (template instances) and is a class returned by value (a hidden return slot),
 * 0 when it is shown and is not, -1 when the symbol does not show it. */
static int hidden_slot(const char *d)
{
    size_t open = params_open(d, strlen(d));
    int depth = 0;
    size_t space = 0;
    for (size_t i = 0; i < open; i++) {
        if (d[i] == '<' || d[i] == '(')
            depth++;
        else if (d[i] == '>' || d[i] == ')')
            depth--;
        else if (d[i] == ' ' && depth == 0)
            space = i;
    }
    if (!space)
        return -1;
    static const char *const scalars[] = {"void", "bool",  "char",   "short",    "int",
                                          "long", "float", "double", "unsigned", "signed"};
    if (d[space - 1] == '*' || d[space - 1] == '&')
        return 0;
    for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++)
        if (strncmp(d, scalars[i], strlen(scalars[i])) == 0)
            return 0;
    return 1;
}

/* Prints a suggested profile row for an unknown reachable candidate: live when the signature
 * shows where the tensor is, commented out with the reason when it does not. */
static void suggest(const char *path, const row *r, FILE *out)
{
    dls_profile p = {0};
    if (strlen(r->sym->name) >= sizeof p.symbol) {
        fprintf(out, "# %s: symbol name too long for a profile row\n", r->demangled);
        return;
    }
    snprintf(p.symbol, sizeof p.symbol, "%s", r->sym->name);
    framework_of(path, p.framework, sizeof p.framework);
    param_kind kind = PARAM_MANAGED;
    int versioned = 0;
    int k = tensor_param(r->demangled, &kind, &versioned);
    char lower[512];
    size_t i = 0;
    for (; r->sym->name[i] && i < sizeof lower - 1; i++)
        lower[i] = (char)tolower((unsigned char)r->sym->name[i]);
    lower[i] = '\0';
    int from = strstr(lower, "from") != NULL, to = strstr(lower, "todlpack") || strstr(lower, "to_dlpack");
    int cxx = strncmp(r->sym->name, "_Z", 2) == 0;
    int slot = cxx ? hidden_slot(r->demangled) : 0;
    const char *why = NULL;
    char reason[160];
    if (k >= 0 && kind == PARAM_DLTENSOR && !to) {
        fprintf(out, "# %s: takes a bare DLTensor* (no owner, no deleter): nothing to profile\n", r->demangled);
        return;
    }
    if (k >= 0) {
        p.role = kind == PARAM_MANAGED ? DLS_ROLE_IMPORT : DLS_ROLE_EXPORT;
        p.where = kind == PARAM_MANAGED ? DLS_WHERE_ARG : kind == PARAM_MANAGED_OUT ? DLS_WHERE_OUT : DLS_WHERE_FILL;
        p.index = k + (slot > 0);
        p.versioned = versioned;
        if (p.index > DLS_PROFILE_MAX_ARG) {
            fprintf(out, "# %s: the tensor is argument %d, past the %d register arguments a profile can name\n",
                    r->demangled, p.index, DLS_PROFILE_MAX_ARG + 1);
            return;
        }
        if (slot < 0) {
            snprintf(reason, sizeof reason,
                     "a C++ symbol does not show the return type: if it returns a class by value or is a "
                     "non-static member, the tensor is arg %d, not %d",
                     k + 1, k);
            why = reason;
        }
    } else if (cxx && slot == 0 && strncmp(r->demangled, "DLManagedTensor", 15) == 0 &&
               strcspn(r->demangled, "*") < strcspn(r->demangled, " ")) {
        p.role = DLS_ROLE_EXPORT; /* the shown return type is a managed tensor pointer */
        p.where = DLS_WHERE_RET;
        p.versioned = strncmp(r->demangled, "DLManagedTensorVersioned", 24) == 0;
    } else if (from != to) {
        p.role = from ? DLS_ROLE_IMPORT : DLS_ROLE_EXPORT;
        p.where = from ? DLS_WHERE_ARG : DLS_WHERE_RET;
        p.versioned = strstr(lower, "versioned") != NULL;
        why = "guessed from the name only";
    } else {
        fprintf(out, "# %s: neither a to- nor a from-DLPack function by its name; no row suggested\n", r->demangled);
        return;
    }
    char line[512];
    dls_profile_format_line(&p, line, sizeof line);
    if (why)
        fprintf(out, "# %s: %s; check the declaration, then uncomment\n# %s\n", r->demangled, why, line);
    else if (p.where == DLS_WHERE_RET)
        fprintf(out, "# %s: the signature shows the tensor is returned\n%s\n", r->demangled, line);
    else
        fprintf(out, "# %s: the signature shows the tensor at argument %d%s\n%s\n", r->demangled, p.index,
                slot > 0 ? " (after the hidden return slot of the class it returns by value)" : "", line);
}

/* Says once on stderr that C++ names stay mangled, when name is one and no C++ runtime is found. */
static void warn_mangled(const char *name)
{
    static int said;
    if (!said && strncmp(name, "_Z", 2) == 0 && !dlt_demangle_available()) {
        fputs("dlsync scan: no C++ runtime (libstdc++.so.6 or libc++abi.so.1) can be loaded: C++ names are shown "
              "mangled\n",
              stderr);
        said = 1;
    }
}

static int scan_file(const char *path, dlt_tally *seen, FILE *out, FILE *sugg)
{
    dlt_elf_info info;
    char err[160];
    if (dlt_elf_read(path, is_candidate, NULL, &info, err, sizeof err) != 0) {
        char safe[1024];
        fprintf(stderr, "dlsync scan: %s: %s\n", dlt_text_escape(path, safe, sizeof safe), err);
        return -1;
    }
    row *rows = calloc(info.n ? info.n : 1, sizeof *rows);
    int rc = rows ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < info.n; i++) {
        rows[i].sym = &info.syms[i];
        warn_mangled(info.syms[i].name);
        rows[i].demangled = dlt_demangle(info.syms[i].name);
        if (!rows[i].demangled)
            rc = -1;
    }
    if (rc == 0) {
        qsort(rows, info.n, sizeof *rows, by_demangled);
        char safe[2048];
        fprintf(out, "%s: %s%s, %zu DLPack-related symbol%s\n", dlt_text_escape(path, safe, sizeof safe),
                info.is_exec ? "executable" : "shared object",
                info.symbolic ? " (linked -Bsymbolic: its own calls are bound inside it)" : "", info.n,
                info.n == 1 ? "" : "s");
        for (size_t i = 0; i < info.n; i++) {
            const dlt_elf_sym *s = rows[i].sym;
            const char *where = reach(&info, s);
            int wrapped = is_wrapped(s->name);
            fprintf(out, "  %-3s  %-7s  %-11s  %s", s->defined ? "def" : "imp", wrapped ? "wrapped" : "-", where,
                    dlt_text_escape(rows[i].demangled, safe, sizeof safe));
            if (strcmp(rows[i].demangled, s->name) != 0)
                fprintf(out, "  [%s]", dlt_text_escape(s->name, safe, sizeof safe));
            fputc('\n', out);
            int fresh = 0;
            if (!wrapped && (strcmp(where, "reachable") == 0 || strcmp(where, "protected") == 0)) {
                if (!dlt_tally_add(seen, s->name, &fresh))
                    rc = -1;
                else if (fresh)
                    suggest(path, &rows[i], sugg);
            }
        }
    }
    for (size_t i = 0; rows && i < info.n; i++)
        free(rows[i].demangled);
    free(rows);
    dlt_elf_info_free(&info);
    if (rc != 0)
        fprintf(stderr, "dlsync scan: %s: out of memory\n", path);
    return rc;
}

int dlt_cmd_scan(int argc, char **argv)
{
    int i = 1;
    if (i < argc && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)) {
        fputs(dlt_usage_scan, stdout);
        return 0;
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc) {
        fputs("dlsync scan: no FILE to scan\n(dlsync scan --help for usage)\n", stderr);
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
    dlt_tally seen = {0};
    int rc = 0;
    for (; i < argc; i++)
        if (scan_file(argv[i], &seen, stdout, sugg) != 0)
            rc = 1;
    fclose(sugg);
    if (slen)
        printf("\n# Suggested DLSYNC_PROFILES rows for reachable candidates no built-in profile wraps.\n"
               "# Row: <exported-symbol> <framework> <export|import> <ret|out:N|arg:N|fill:N> <v0|v1>\n%s",
               sbuf);
    free(sbuf);
    dlt_tally_free(&seen);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "dlsync scan: writing the listing failed: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
