/* DLSYNC_PROFILES rows (see profile_file.h). */
#include "profile_file.h"

#include "../common/config.h"
#include "../report/warn.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dls_profile g_file_rows[DLS_MAX_FILE_ROWS];
static size_t g_file_n;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void read_profiles_file(void)
{
    const char *path = dls_config_get()->profiles_path;
    if (!path)
        return;
    FILE *fp = fopen(path, "re");
    if (!fp) {
        dls_warn_once("profiles-open", "cannot read DLSYNC_PROFILES=%s; using the built-in profiles only", path);
        return;
    }
    size_t nb;
    const dls_profile *builtin = dls_profiles_builtin(&nb);
    char *line = NULL; /* getline: a line of any length is one line */
    size_t cap = 0;
    int lineno = 0;
    while (getline(&line, &cap, fp) >= 0) {
        char err[160], key[64];
        dls_profile row;
        lineno++;
        int rc = dls_profile_parse_line(line, &row, err, sizeof err);
        snprintf(key, sizeof key, "profiles-line-%d", lineno);
        if (rc < 0) {
            dls_warn_once(key, "%s:%d: %s; line skipped", path, lineno, err);
            continue;
        }
        if (rc == 0)
            continue;
        int dup = 0;
        for (size_t i = 0; i < nb && !dup; i++)
            dup = strcmp(builtin[i].symbol, row.symbol) == 0;
        if (dup) {
            dls_warn_once(key, "%s:%d: %s is a built-in profile; line skipped", path, lineno, row.symbol);
            continue;
        }
        if (g_file_n == DLS_MAX_FILE_ROWS) {
            dls_warn_once("profiles-full", "%s: more than %d rows; the rest are ignored", path, DLS_MAX_FILE_ROWS);
            break;
        }
        g_file_rows[g_file_n++] = row;
    }
    free(line);
    fclose(fp);
}

void dls_profile_file_read(void)
{
    pthread_once(&g_once, read_profiles_file);
}

const dls_profile *dls_file_rows(size_t *n)
{
    dls_profile_file_read();
    *n = g_file_n;
    return g_file_rows;
}
