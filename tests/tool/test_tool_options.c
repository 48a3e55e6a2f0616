/* Tests that the DLSYNC_* variables are named in one place, shim/common/options.def: the
 * README's configuration table is its rows, `dlsync --help` and `dlsync run --help` list each,
 * the man page names each, every DLSYNC_ name in the shim, the command, the Python package, the
 * scripts and the docs is a row (or a name of the C API, or the one variable only the tests
 * read), each variable read where it is used is read where its row says, and DLSYNC_LOG's
 * description names each rank variable. */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/names.h"
#include "dls_test.h"

/* A row of options.def as the README shows it. */
typedef struct {
    const char *name, *values, *shown, *meaning;
} row;

static const row g_rows[] = {
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning) {DLS_VAR(NAME), values, shown, meaning},
#define DLS_PASSED(NAME, reader, values, shown, meaning) {DLS_VAR(NAME), values, shown, meaning},
#include "common/options.def"
};
#define NROWS (sizeof g_rows / sizeof *g_rows)

static const struct {
    const char *name, *reader;
} g_passed[] = {
#define DLS_PASSED(NAME, reader, values, shown, meaning) {#NAME, reader},
#include "common/options.def"
};

static const char *const g_ranks[] = {
#define DLS_RANK_VARIABLE(NAME) #NAME,
#include "common/options.def"
};

static const char g_header[] = "| variable | values | default | meaning |\n|---|---|---|---|\n";

/* The README's table as the rows make it (malloc'd). */
static char *expected_table(void)
{
    size_t n = sizeof g_header;
    for (size_t i = 0; i < NROWS; i++)
        n += strlen(g_rows[i].name) + strlen(g_rows[i].values) + strlen(g_rows[i].shown) + strlen(g_rows[i].meaning) +
             16;
    char *t = malloc(n);
    assert_non_null(t);
    size_t len = (size_t)snprintf(t, n, "%s", g_header);
    for (size_t i = 0; i < NROWS; i++)
        len += (size_t)snprintf(t + len, n - len, "| `%s` | %s | %s | %s |\n", g_rows[i].name, g_rows[i].values,
                                g_rows[i].shown, g_rows[i].meaning);
    return t;
}

/* The README's table of DLSYNC_* variables as it is: the header and every line starting with
 * '|' after it (malloc'd), or NULL when there is no such header. */
static char *readme_table(const char *readme)
{
    const char *start = strstr(readme, g_header);
    if (!start)
        return NULL;
    const char *end = start;
    while (*end == '|') {
        const char *eol = strchr(end, '\n');
        end = eol ? eol + 1 : end + strlen(end);
    }
    return strndup(start, (size_t)(end - start));
}

static void the_readme_table_is_the_options_table(void **state)
{
    (void)state;
    char *readme = dls_read_file(DLS_SRC_DIR "/README.md");
    assert_non_null(readme);
    char *want = expected_table(), *have = readme_table(readme);
    if (!have || strcmp(want, have) != 0) {
        const char *w = want, *h = have ? have : "";
        while (*w && *w == *h)
            w++, h++;
        while (w > want && w[-1] != '\n')
            w--;
        fprintf(stderr, "README.md's configuration table should read (from shim/common/options.def):\n%s", want);
        fail_msg("README.md's configuration table differs from shim/common/options.def from the line\n%.*s",
                 (int)strcspn(w, "\n"), w);
    }
    free(want);
    free(have);
    free(readme);
}

/* Each variable starts a line of `dlsync --help` and of `dlsync run --help`, and the markdown is
 * gone from both. */
static void help_lists_every_variable(void **state)
{
    (void)state;
    char bin[512];
    dls_build_path(bin, sizeof bin, "bin/dlsync");
    const char *run_help[] = {bin, "run", "--help", NULL}, *help[] = {bin, "--help", NULL};
    const char *const *cases[] = {run_help, help};
    for (size_t c = 0; c < 2; c++) {
        dls_run_result r;
        assert_int_equal(dls_run(cases[c], NULL, &r), 0);
        assert_int_equal(r.status, 0);
        const char *list = strstr(r.out, "\nEnvironment");
        assert_non_null(list);
        for (size_t i = 0; i < NROWS; i++) {
            char line[64];
            snprintf(line, sizeof line, "\n  %s ", g_rows[i].name);
            if (!strstr(list, line))
                fail_msg("%s --help does not list %s:\n%s", c == 0 ? "dlsync run" : "dlsync", g_rows[i].name, r.out);
        }
        assert_null(strchr(list, '`'));
        assert_null(strstr(list, "\\|"));
        assert_non_null(strstr(list, "<enter|exit>"));
        dls_run_free(&r);
    }
}

static void the_man_page_names_every_variable(void **state)
{
    (void)state;
    char *man = dls_read_file(DLS_SRC_DIR "/tools/dlsync.1");
    assert_non_null(man);
    char *env = strstr(man, "\n.SH ENVIRONMENT\n");
    assert_non_null(env);
    char *next = strstr(env + 1, "\n.SH ");
    if (next)
        *next = '\0';
    for (size_t i = 0; i < NROWS; i++)
        if (!strstr(env, g_rows[i].name))
            fail_msg("the man page's ENVIRONMENT does not name %s", g_rows[i].name);
    free(man);
}

/* 1 when name is a row. */
static int is_row(const char *name)
{
    for (size_t i = 0; i < NROWS; i++)
        if (strcmp(g_rows[i].name, name) == 0)
            return 1;
    return 0;
}

/* 1 when c may be part of a C identifier. */
static int ident_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static char *g_api; /* the public headers, where the C API's DLSYNC_ names are defined */

/* 1 when name is defined by the C API: `#define name` or an enumerator `name =` in g_api. */
static int is_api(const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(g_api, name); p; p = strstr(p + 1, name)) {
        if (ident_char(p[n]) || (p > g_api && ident_char(p[-1])))
            continue;
        if ((p - g_api >= 8 && strncmp(p - 8, "#define ", 8) == 0) || strncmp(p + n, " =", 2) == 0)
            return 1;
    }
    return 0;
}

/* The one DLSYNC_ variable that is no row: scripts/test-wheel.sh sets it for the wheel's tests
 * (tests/python), and nothing of dlsync reads it. */
#define TESTS_ONLY "DLSYNC_TEST_SCENARIOS"

static char g_strays[4096]; /* "path: NAME" for each name that is neither, one per line */

/* Adds to g_strays each DLSYNC_<NAME> of text that is no row and no C API name, and each
 * DLS_VAR(NAME) whose NAME is no row. */
static void check_names(const char *path, const char *text)
{
    for (const char *p = strstr(text, "DLSYNC_"); p; p = strstr(p + 1, "DLSYNC_")) {
        if (p > text && ident_char(p[-1]))
            continue;
        size_t n = 7;
        while (ident_char(p[n]) && !(p[n] >= 'a' && p[n] <= 'z'))
            n++;
        while (n > 7 && p[n - 1] == '_')
            n--;
        char name[80];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        if (n > 7 && !is_row(name) && !is_api(name) && strcmp(name, TESTS_ONLY) != 0)
            snprintf(g_strays + strlen(g_strays), sizeof g_strays - strlen(g_strays), "%s: %s\n", path, name);
    }
    for (const char *p = strstr(text, "DLS_VAR("); p; p = strstr(p + 1, "DLS_VAR(")) {
        size_t n = strcspn(p + 8, ")");
        char name[80];
        snprintf(name, sizeof name, "DLSYNC_%.*s", (int)n, p + 8);
        if (strcmp(name, "DLSYNC_NAME") != 0 && !is_row(name))
            snprintf(g_strays + strlen(g_strays), sizeof g_strays - strlen(g_strays), "%s: %s\n", path, name);
    }
}

/* 1 when path ends with one of the suffixes of the sources read. */
static int source_file(const char *path)
{
    static const char *const ends[] = {".c", ".h", ".def", ".S", ".py", ".md", ".1", ".sh"};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        size_t k = strlen(ends[i]);
        if (n > k && strcmp(path + n - k, ends[i]) == 0)
            return 1;
    }
    return 0;
}

static int scan_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type != FTW_F || !source_file(path))
        return 0;
    char *text = dls_read_file(path);
    if (text)
        check_names(path + strlen(DLS_SRC_DIR) + 1, text);
    free(text);
    return 0;
}

static void every_dlsync_name_in_the_sources_is_a_row(void **state)
{
    (void)state;
    char *a = dls_read_file(DLS_SRC_DIR "/shim/include/dlsync.h"),
         *b = dls_read_file(DLS_SRC_DIR "/shim/include/dlsync_dlpack.h");
    assert_non_null(a);
    assert_non_null(b);
    g_api = malloc(strlen(a) + strlen(b) + 2);
    assert_non_null(g_api);
    sprintf(g_api, "%s\n%s", a, b);
    g_strays[0] = '\0';
    static const char *const trees[] = {"shim", "tools", "python/dlsync", "scripts", "docs", "README.md"};
    for (size_t i = 0; i < sizeof trees / sizeof *trees; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", DLS_SRC_DIR, trees[i]);
        assert_int_equal(nftw(path, scan_file, 16, FTW_PHYS), 0);
    }
    /* The check itself: a name that is neither is found. */
    char before[sizeof g_strays];
    snprintf(before, sizeof before, "%s", g_strays);
    check_names("probe", "set DLSYNC_NO_SUCH_OPTION, DLSYNC_MODE, DLSYNC_OK and DLS_VAR(NOR_THIS)");
    assert_string_equal(g_strays + strlen(before), "probe: DLSYNC_NO_SUCH_OPTION\nprobe: DLSYNC_NOR_THIS\n");
    g_strays[strlen(before)] = '\0';
    if (g_strays[0])
        fail_msg("DLSYNC_ names that are no row of shim/common/options.def:\n%s", g_strays);
    free(g_api);
    free(a);
    free(b);
}

/* A DLS_PASSED row's reader names the variable. */
static void each_passed_variable_is_read_where_its_row_says(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_passed / sizeof *g_passed; i++) {
        char path[1024], full[128], enumerator[128];
        snprintf(path, sizeof path, "%s/%s", DLS_SRC_DIR, g_passed[i].reader);
        char *text = dls_read_file(path);
        if (!text)
            fail_msg("%s: its reader %s cannot be read", g_passed[i].name, g_passed[i].reader);
        snprintf(full, sizeof full, "\"DLSYNC_%s\"", g_passed[i].name);
        snprintf(enumerator, sizeof enumerator, "dls_config_passed(DLS_PASSED_%s)", g_passed[i].name);
        if (!strstr(text, full) && !strstr(text, enumerator))
            fail_msg("%s does not read DLSYNC_%s", g_passed[i].reader, g_passed[i].name);
        free(text);
    }
}

static void the_log_names_each_rank_variable(void **state)
{
    (void)state;
    const char *meaning = NULL;
    for (size_t i = 0; i < NROWS; i++)
        if (strcmp(g_rows[i].name, "DLSYNC_LOG") == 0)
            meaning = g_rows[i].meaning;
    assert_non_null(meaning);
    assert_true(sizeof g_ranks / sizeof *g_ranks >= 1);
    for (size_t i = 0; i < sizeof g_ranks / sizeof *g_ranks; i++) {
        char code[64];
        snprintf(code, sizeof code, "`%s`", g_ranks[i]);
        if (!strstr(meaning, code))
            fail_msg("DLSYNC_LOG's meaning does not name the rank variable %s", g_ranks[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_readme_table_is_the_options_table),
        cmocka_unit_test(help_lists_every_variable),
        cmocka_unit_test(the_man_page_names_every_variable),
        cmocka_unit_test(every_dlsync_name_in_the_sources_is_a_row),
        cmocka_unit_test(each_passed_variable_is_read_where_its_row_says),
        cmocka_unit_test(the_log_names_each_rank_variable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
