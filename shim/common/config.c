/* Reads the DLSYNC_* environment once (see config.h): one reader per kind of setting, each row
 * of options.def read by its kind's reader. */
#include "config.h"

#include "compiler.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dls_config g_config;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_inert;
const dls_config *_Atomic dls_config_read;

const char *dls_mode_name(dls_mode m)
{
    return dls_mode_text((int)m);
}

static void problem(dls_config *c, const char *fmt, ...) DLS_PRINTF(2, 3);

/* Remembers one bad value for the start-up to print. */
static void problem(dls_config *c, const char *fmt, ...)
{
    if (c->nproblems == DLS_CONFIG_PROBLEMS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->problems[c->nproblems++], sizeof c->problems[0], fmt, ap);
    va_end(ap);
}

/* Empty values count as unset. */
static const char *env_value(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : NULL;
}

/* The readers of the kinds of options.def: each sets *out from the value v (never empty) and
 * returns 0, or returns -1 and leaves *out alone when v is not such a value; DLS_READS_<kind> is
 * what it reads, as a bad value's warning says it. */
#define DLS_READS_flag "0 or 1"
static int read_flag(const char *v, int *out)
{
    if (strcmp(v, "1") != 0 && strcmp(v, "0") != 0)
        return -1;
    *out = v[0] == '1';
    return 0;
}

#define DLS_READS_text "text"
static int read_text(const char *v, const char **out)
{
    *out = v;
    return 0;
}

#define DLS_READS_absolute "an absolute path"
static int read_absolute(const char *v, const char **out)
{
    if (v[0] != '/')
        return -1;
    *out = v;
    return 0;
}

#define DLS_READS_size "a size (digits with an optional k, m or g; 0 for none)"
static int read_size(const char *v, uint64_t *out)
{
    return dls_parse_size(v, out);
}

#define DLS_READS_mode "one of off, trace, check, fix"
static int read_mode(const char *v, dls_mode *out)
{
    int m = dls_mode_from_name(v);
    if (m < 0)
        return -1;
    *out = (dls_mode)m;
    return 0;
}

#define DLS_READS_stack "native, python or both"
static int read_stack(const char *v, dls_stack_kind *out)
{
    if (strcmp(v, "both") == 0)
        *out = DLS_STACK_BOTH;
    else if (strcmp(v, "native") == 0)
        *out = DLS_STACK_NATIVE;
    else if (strcmp(v, "python") == 0)
        *out = DLS_STACK_PYTHON;
    else
        return -1;
    return 0;
}

#define DLS_READS_run_id "1 to 64 letters, digits, '-', '_' or '.'"
static int read_run_id(const char *v, const char **out)
{
    if (!dls_run_id_valid(v))
        return -1;
    *out = v;
    return 0;
}

static void read_config(void)
{
    dls_config c = {
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning) .field = init,
#include "options.def"
    };
    if (g_inert) {
        c.mode = DLS_MODE_OFF;
        g_config = c;
        return;
    }
    const char *v;
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning) \
    if ((v = env_value(DLS_VAR(NAME))) && read_##kind(v, &c.field) != 0)      \
        problem(&c, DLS_VAR(NAME) "=%.64s is not " DLS_READS_##kind "; " fallback, v);
#include "options.def"
    g_config = c;
}

const char *dls_config_passed(dls_passed v)
{
    static const char *const names[] = {
#define DLS_PASSED(NAME, reader, values, shown, meaning) DLS_VAR(NAME),
#include "options.def"
    };
    const char *value = (unsigned)v < sizeof names / sizeof *names ? getenv(names[v]) : NULL;
    return value && *value ? value : NULL;
}

const dls_config *dls_config_get_first(void)
{
    pthread_once(&g_once, read_config);
    atomic_store_explicit(&dls_config_read, &g_config, memory_order_release);
    return &g_config;
}

void dls_config_make_inert(void)
{
    g_inert = 1;
    g_config.mode = DLS_MODE_OFF; /* in case the configuration was read already */
}

void dls_config_reset_for_tests(void)
{
    g_inert = 0;
    atomic_store(&dls_config_read, NULL);
    g_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    memset(&g_config, 0, sizeof g_config);
}
