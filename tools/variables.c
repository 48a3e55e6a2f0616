/* The list of DLSYNC_* variables at the end of `dlsync --help` and `dlsync run --help`, from the
 * rows of shim/common/options.def (the README's table comes from the same rows). */
#include "commands.h"

#include <string.h>

#define HELP_WIDTH 100 /* columns of the help text */
#define HELP_INDENT 28 /* where a variable's description starts */

typedef struct {
    const char *name, *values, *shown, *meaning;
} variable;

static const variable g_variables[] = {
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning) {DLS_VAR(NAME), values, shown, meaning},
#define DLS_PASSED(NAME, reader, values, shown, meaning) {DLS_VAR(NAME), values, shown, meaning},
#include "common/options.def"
};

/* Appends the markdown text s to buf (size n, holding *len bytes) as plain text: without the
 * backticks of code spans, "\|" as "|". */
static void plain(char *buf, size_t n, size_t *len, const char *s)
{
    for (; *s && *len + 1 < n; s++) {
        if (*s == '`' || (s[0] == '\\' && s[1] == '|'))
            continue;
        buf[(*len)++] = *s;
    }
    buf[*len] = '\0';
}

/* Writes text after a variable's name, which ends at column `col`: from HELP_INDENT on that line
 * (on the next when the name reaches it), wrapped at HELP_WIDTH, each further line from
 * HELP_INDENT. */
static void wrapped(FILE *out, const char *text, int col)
{
    if (col >= HELP_INDENT) {
        fputc('\n', out);
        col = 0;
    }
    fprintf(out, "%*s", HELP_INDENT - col, "");
    col = HELP_INDENT;
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > HELP_INDENT && col + 1 + (int)word > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_INDENT, "");
            col = HELP_INDENT;
        } else if (col > HELP_INDENT) {
            fputc(' ', out);
            col++;
        }
        fwrite(text, 1, word, out);
        col += (int)word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

void dlt_usage_variables(FILE *out)
{
    fputs("Environment (the README's configuration table says the same; dlsync run sets some of these\n"
          "from its options):\n",
          out);
    for (size_t i = 0; i < sizeof g_variables / sizeof *g_variables; i++) {
        const variable *v = &g_variables[i];
        char text[1024];
        size_t len = 0;
        plain(text, sizeof text, &len, v->values);
        plain(text, sizeof text, &len, " (default: ");
        plain(text, sizeof text, &len, v->shown);
        plain(text, sizeof text, &len, "): ");
        plain(text, sizeof text, &len, v->meaning);
        wrapped(out, text, fprintf(out, "  %s ", v->name));
    }
}
