/* dlsync run: runs a program with the shim preloaded (see commands.h and the help text). */
#include "commands.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/names.h"
#include "logread.h"
#include "shimpath.h"

/* The sanitizer runtime the shim was built with ("" normally); it must come first in
 * LD_PRELOAD when an instrumented shim goes into an uninstrumented program. */
#ifndef DLS_TOOL_SAN_RUNTIME
#define DLS_TOOL_SAN_RUNTIME ""
#endif

typedef struct {
    const char *mode, *log, *profiles;
    int verbose, fail_on_race;
    char **program; /* NULL-terminated */
} run_options;

static int usage_error(const char *fmt, const char *arg)
{
    fputs("dlsync run: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(dlsync --help for usage)\n", stderr);
    return DLS_EXIT_USAGE;
}

/* Matches "--name VALUE" and "--name=VALUE"; advances *i past what it used. 1 = matched,
 * 0 = not this option, -1 = value missing. */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t nl = strlen(name);
    if (strncmp(argv[*i], name, nl) != 0)
        return 0;
    if (argv[*i][nl] == '=') {
        *value = argv[*i] + nl + 1;
        return 1;
    }
    if (argv[*i][nl] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

static int parse(int argc, char **argv, run_options *o)
{
    static const char *const names[] = {"--mode", "--log", "--profiles"};
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(dls_usage_text, stdout);
            return -1;
        }
        if (strcmp(a, "--verbose") == 0) {
            o->verbose = 1;
            continue;
        }
        if (strcmp(a, "--fail-on-race") == 0) {
            o->fail_on_race = 1;
            continue;
        }
        const char **slots[] = {&o->mode, &o->log, &o->profiles};
        int matched = 0;
        for (size_t k = 0; k < 3 && !matched; k++) {
            matched = option_value(argc, argv, &i, names[k], slots[k]);
            if (matched < 0)
                return usage_error("%s needs a value", names[k]);
        }
        if (!matched)
            return usage_error("unknown option %s", a);
    }
    if (i >= argc)
        return usage_error("%s", "no PROGRAM to run");
    o->program = argv + i;
    if (o->mode && dls_mode_from_name(o->mode) < 0)
        return usage_error("--mode %s: expected trace, check, fix or off", o->mode);
    if (o->fail_on_race && o->mode && strcmp(o->mode, "check") != 0)
        return usage_error("--fail-on-race works in check mode only, not with --mode %s", o->mode);
    if (o->fail_on_race)
        o->mode = "check";
    if (o->log && !*o->log)
        return usage_error("%s", "--log needs a non-empty FILE");
    if (o->profiles && !*o->profiles)
        return usage_error("%s", "--profiles needs a non-empty FILE");
    return 0;
}

/* Puts the sanitizer runtime (if any) and the shim in front of LD_PRELOAD. */
static int set_preload(const char *shim)
{
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(DLS_TOOL_SAN_RUNTIME) + strlen(shim) + (old ? strlen(old) : 0) + 3;
    char *v = malloc(len);
    if (!v)
        return -1;
    snprintf(v, len, "%s%s%s%s%s", DLS_TOOL_SAN_RUNTIME, DLS_TOOL_SAN_RUNTIME[0] ? ":" : "", shim,
             old && *old ? ":" : "", old && *old ? old : "");
    int rc = setenv("LD_PRELOAD", v, 1);
    free(v);
    return rc;
}

static int set_environment(const run_options *o, const char *shim, const char *log)
{
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    int inject = !inj || !*inj; /* marked as dlsync's own, like the shim does (cuda/inject.h) */
    if (set_preload(shim) != 0 ||
        (inject && (setenv("CUDA_INJECTION64_PATH", shim, 1) != 0 || setenv(DLS_INJECTION_MARKER, shim, 1) != 0)) ||
        (o->mode && setenv("DLSYNC_MODE", o->mode, 1) != 0) || (log && setenv("DLSYNC_LOG", log, 1) != 0) ||
        (o->profiles && setenv("DLSYNC_PROFILES", o->profiles, 1) != 0) ||
        (o->verbose && setenv("DLSYNC_VERBOSE", "1", 1) != 0)) {
        fprintf(stderr, "dlsync run: cannot set the environment: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static void exec_program(char **program)
{
    execvp(program[0], program);
    int err = errno;
    fprintf(stderr, "dlsync run: cannot run %s: %s\n", program[0], strerror(err));
    _exit(err == ENOENT ? DLS_EXIT_NOTFOUND : DLS_EXIT_NOEXEC);
}

static volatile sig_atomic_t g_child;

static void forward_signal(int sig)
{
    if (g_child > 0)
        kill((pid_t)g_child, sig);
}

/* Runs the program as a child and returns its status (128+signal when killed). */
static int run_child(char **program)
{
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "dlsync run: cannot start %s: %s\n", program[0], strerror(errno));
        return DLS_EXIT_INTERNAL;
    }
    if (pid == 0)
        exec_program(program);
    g_child = pid;
    /* The terminal's ^C and ^\ reach the child directly; termination requests are passed on. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_signal}, old[4];
    sigaction(SIGINT, &ign, &old[0]);
    sigaction(SIGQUIT, &ign, &old[1]);
    sigaction(SIGTERM, &fwd, &old[2]);
    sigaction(SIGHUP, &fwd, &old[3]);
    int st = 0;
    pid_t got;
    while ((got = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGQUIT, &old[1], NULL);
    sigaction(SIGTERM, &old[2], NULL);
    sigaction(SIGHUP, &old[3], NULL);
    g_child = 0;
    if (got < 0)
        return DLS_EXIT_INTERNAL;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Turns a DLSYNC_LOG pattern into a glob: %p and %r match anything, %% is a '%', glob
 * metacharacters of the path are escaped. Returns a malloc'd string or NULL. */
static char *log_glob(const char *pattern)
{
    char *g = malloc(strlen(pattern) * 2 + 1), *w = g;
    if (!g)
        return NULL;
    for (const char *p = pattern; *p; p++) {
        if (p[0] == '%' && (p[1] == 'p' || p[1] == 'r')) {
            *w++ = '*';
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            *w++ = '%';
            p++;
        } else {
            if (strchr("*?[\\", *p))
                *w++ = '\\';
            *w++ = *p;
        }
    }
    *w = '\0';
    return g;
}

/* Counts race records at or after since_ns in the logs matching pattern. */
static long long count_races(const char *pattern, long long since_ns)
{
    char *g = log_glob(pattern);
    glob_t gl;
    long long races = 0;
    if (!g || glob(g, 0, NULL, &gl) != 0) {
        free(g);
        return 0;
    }
    dls_log_set set = {0};
    for (size_t i = 0; i < gl.gl_pathc; i++)
        dls_log_read(&set, gl.gl_pathv[i], stderr);
    for (size_t i = 0; i < set.n; i++) {
        long long t;
        if (strcmp(set.recs[i].ev, "race") == 0 && (!dls_json_get_int(set.recs[i].obj, "t", &t) || t >= since_ns))
            races++;
    }
    dls_log_set_free(&set);
    globfree(&gl);
    free(g);
    return races;
}

/* Removes the temporary log directory and what the shim wrote in it. */
static void remove_tmpdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[PATH_MAX];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

int dls_cmd_run(int argc, char **argv)
{
    run_options o = {0};
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    char shim[PATH_MAX];
    if (dls_find_shim(shim, sizeof shim) != 0) {
        fprintf(stderr, "dlsync run: cannot find libdlsync.so (looked for %s)\n",
                shim[0] ? shim : "../lib from this program");
        return DLS_EXIT_INTERNAL;
    }
    if (!o.fail_on_race) {
        if (set_environment(&o, shim, o.log) != 0)
            return DLS_EXIT_INTERNAL;
        fflush(NULL);
        exec_program(o.program);
    }
    char tmpdir[PATH_MAX] = "", tmplog[PATH_MAX + 32];
    const char *log = o.log;
    if (!log) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/dlsync-run.XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "dlsync run: cannot create a temporary log directory %s: %s\n", tmpdir, strerror(errno));
            return DLS_EXIT_INTERNAL;
        }
        snprintf(tmplog, sizeof tmplog, "%s/log.%%p.jsonl", tmpdir);
        log = tmplog;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long since = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    int status = set_environment(&o, shim, log) == 0 ? run_child(o.program) : DLS_EXIT_INTERNAL;
    long long races = status == DLS_EXIT_INTERNAL ? 0 : count_races(log, since);
    if (tmpdir[0])
        remove_tmpdir(tmpdir);
    if (races > 0) {
        fprintf(stderr, "dlsync run: %lld race record%s logged%s\n", races, races == 1 ? "" : "s",
                o.log ? "" : " (run with --log FILE and see dlsync report FILE for details)");
        if (status == 0)
            status = DLS_EXIT_RACE;
    }
    return status;
}
