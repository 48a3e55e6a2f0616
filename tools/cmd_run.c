/* dlsync run: runs a program with the shim preloaded and waits for it; says what the run
 * checked and, with --fail-on-race, turns races and unchecked processes into its exit status
 * (see commands.h and the help text). */
#include "commands.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "grow.h"
#include "common/preloadable.h"
#include "report/suppress.h"
#include "shimpath.h"
#include "textesc.h"

/* The sanitizer runtime the shim was built with ("" normally); it must come first in
 * LD_PRELOAD when an instrumented shim goes into an uninstrumented program. */
#ifndef DLT_SAN_RUNTIME
#define DLT_SAN_RUNTIME ""
#endif

typedef struct {
    const char *mode, *log, *profiles, *suppressions, *log_limit, *error_exitcode;
    int verbose, quiet, fail_on_race, race_status;
    char **program; /* NULL-terminated */
} run_options;

static int usage_error(const char *fmt, const char *arg)
{
    char safe[512];
    fputs("dlsync run: ", stderr);
    fprintf(stderr, fmt, dlt_text_escape(arg, safe, sizeof safe));
    fputs("\n(dlsync run --help for usage)\n", stderr);
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

static void say_bad_suppression(unsigned line, const char *reason, void *ctx)
{
    char safe[1024];
    fprintf(stderr, "dlsync run: %s:%u: %s\n", dlt_text_escape(ctx, safe, sizeof safe), line, reason);
}

/* A suppressions file the shim will read: refused (with each bad line) before the run. */
static int check_suppressions(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return usage_error("--suppressions: cannot read %s", path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (int c; (c = getc(f)) != EOF && len < (4u << 20);) {
        char *nt = dlt_grow(text, &cap, len + 2, 1, 4096);
        if (!nt)
            break;
        text = nt;
        text[len++] = (char)c;
    }
    fclose(f);
    dls_suppress_set set = {0};
    int bad = dls_suppress_parse(text ? text : "", len, &set, say_bad_suppression, (void *)path);
    dls_suppress_set_free(&set);
    free(text);
    return bad ? usage_error("--suppressions %s has bad lines (above)", path) : 0;
}

/* Values that must be checked before the run starts. */
static int check_values(run_options *o)
{
    if (o->mode && dls_mode_from_name(o->mode) < 0)
        return usage_error("--mode %s: expected trace, check, fix or off", o->mode);
    if (o->error_exitcode) {
        char *end = NULL;
        long v = strtol(o->error_exitcode, &end, 10);
        if (!*o->error_exitcode || *end || v < 1 || v > 255 || v == DLS_EXIT_UNCHECKED)
            return usage_error("--error-exitcode %s: expected 1 to 255 but 4 (the status of a run not all checked)",
                               o->error_exitcode);
        o->race_status = (int)v;
        o->fail_on_race = 1;
    }
    if (o->fail_on_race && o->mode && strcmp(o->mode, "check") != 0)
        return usage_error("--fail-on-race works in check mode only, not with --mode %s", o->mode);
    if (o->fail_on_race)
        o->mode = "check";
    uint64_t size;
    if (o->log_limit && dls_parse_size(o->log_limit, &size) != 0)
        return usage_error("--log-limit %s: expected a size in bytes (with k, m or g; 0 for none)", o->log_limit);
    const char *names[] = {"--log", "--profiles", "--suppressions"};
    const char *values[] = {o->log, o->profiles, o->suppressions};
    for (int k = 0; k < 3; k++)
        if (values[k] && !*values[k])
            return usage_error("%s needs a non-empty FILE", names[k]);
    return o->suppressions ? check_suppressions(o->suppressions) : 0;
}

static int parse(int argc, char **argv, run_options *o)
{
    static const char *const names[] = {"--mode",         "--log",       "--profiles",
                                        "--suppressions", "--log-limit", "--error-exitcode"};
    const char **slots[] = {&o->mode, &o->log, &o->profiles, &o->suppressions, &o->log_limit, &o->error_exitcode};
    int i = 1;
    o->race_status = DLS_EXIT_RACE;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(dlt_usage_run, stdout);
            fputc('\n', stdout);
            dlt_usage_variables(stdout);
            return -1;
        }
        int *flags[] = {&o->verbose, &o->quiet, &o->fail_on_race};
        const char *flag_names[] = {"--verbose", "--quiet", "--fail-on-race"};
        int matched = 0;
        for (size_t k = 0; k < 3 && !matched; k++)
            if (strcmp(a, flag_names[k]) == 0)
                matched = *flags[k] = 1;
        for (size_t k = 0; k < sizeof names / sizeof *names && !matched; k++) {
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
    return check_values(o);
}

/* path made absolute from the directory dlsync run started in (malloc'd; NULL stays NULL). */
static char *absolute(const char *path)
{
    char cwd[PATH_MAX];
    if (!path || path[0] == '/' || !getcwd(cwd, sizeof cwd))
        return path ? strdup(path) : NULL;
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *abs = malloc(n);
    if (abs)
        snprintf(abs, n, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path);
    return abs;
}

/* Puts the sanitizer runtime (if any) and the shim in front of LD_PRELOAD. */
static int set_preload(const char *shim)
{
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(DLT_SAN_RUNTIME) + strlen(shim) + (old ? strlen(old) : 0) + 3;
    char *v = malloc(len);
    if (!v)
        return -1;
    snprintf(v, len, "%s%s%s%s%s", DLT_SAN_RUNTIME, DLT_SAN_RUNTIME[0] ? ":" : "", shim, old && *old ? ":" : "",
             old && *old ? old : "");
    int rc = setenv("LD_PRELOAD", v, 1);
    free(v);
    return rc;
}

/* What the environment of the program gets beside LD_PRELOAD. */
typedef struct {
    const char *log, *profiles, *suppressions; /* absolute */
    const char *run_id, *manifest;             /* NULL without a manifest */
} run_setup;

static int set_environment(const run_options *o, const char *shim, const run_setup *s)
{
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    int inject = !inj || !*inj; /* marked as dlsync's own, like the shim does (cuda/inject.h) */
    struct {
        const char *name, *value;
    } vars[] = {
        {DLS_VAR(MODE), o->mode},
        {DLS_VAR(LOG), s->log},
        {DLS_VAR(LOG_LIMIT), o->log_limit},
        {DLS_VAR(PROFILES), s->profiles},
        {DLS_VAR(SUPPRESSIONS), s->suppressions},
        {DLS_VAR(VERBOSE), o->verbose ? "1" : NULL},
        {DLS_VAR(QUIET), o->quiet ? "1" : NULL},
        {DLS_VAR(RUN_ID), s->run_id},
        {DLS_VAR(RUN_MANIFEST), s->manifest},
    };
    int rc = set_preload(shim);
    if (inject && rc == 0)
        rc = setenv("CUDA_INJECTION64_PATH", shim, 1) != 0 || setenv(DLS_VAR(AUTO_INJECTION), shim, 1) != 0;
    for (size_t i = 0; rc == 0 && i < sizeof vars / sizeof *vars; i++)
        if (vars[i].value)
            rc = setenv(vars[i].name, vars[i].value, 1);
    if (rc != 0)
        fprintf(stderr, "dlsync run: cannot set the environment: %s\n", strerror(errno));
    return rc;
}

/* The status of a program that could not be executed (errno err). */
static int exec_status(int err)
{
    return err == ENOENT ? DLS_EXIT_NOTFOUND : DLS_EXIT_NOEXEC;
}

static void say_exec_failed(const char *program, int err)
{
    char safe[1024];
    fprintf(stderr, "dlsync run: cannot run %s: %s\n", dlt_text_escape(program, safe, sizeof safe), strerror(err));
}

static volatile sig_atomic_t g_child;

static void forward_signal(int sig)
{
    if (g_child > 0)
        kill((pid_t)g_child, sig);
}

/* Runs the program as a child and returns its status (128+signal when killed); *pid is the
 * child's; *exec_err the errno of an exec that failed (0 when it ran). */
static int run_child(char **program, pid_t *pid, int *exec_err)
{
    int report[2];
    *exec_err = 0;
    if (pipe2(report, O_CLOEXEC) != 0 || (*pid = fork()) < 0) {
        fprintf(stderr, "dlsync run: cannot start %s: %s\n", program[0], strerror(errno));
        return DLS_EXIT_INTERNAL;
    }
    if (*pid == 0) {
        close(report[0]);
        execvp(program[0], program);
        int err = errno;
        (void)!write(report[1], &err, sizeof err);
        _exit(exec_status(err));
    }
    close(report[1]);
    g_child = *pid;
    /* The terminal's ^C and ^\ reach the child directly; termination requests are passed on. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_signal}, old[4];
    sigaction(SIGINT, &ign, &old[0]);
    sigaction(SIGQUIT, &ign, &old[1]);
    sigaction(SIGTERM, &fwd, &old[2]);
    sigaction(SIGHUP, &fwd, &old[3]);
    ssize_t got;
    while ((got = read(report[0], exec_err, sizeof *exec_err)) < 0 && errno == EINTR)
        ;
    if (got != (ssize_t)sizeof *exec_err)
        *exec_err = 0;
    close(report[0]);
    int st = 0;
    pid_t waited;
    while ((waited = waitpid(*pid, &st, 0)) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGQUIT, &old[1], NULL);
    sigaction(SIGTERM, &old[2], NULL);
    sigaction(SIGHUP, &old[3], NULL);
    g_child = 0;
    if (waited < 0)
        return DLS_EXIT_INTERNAL;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Removes the run's directory and what was written in it. */
static void remove_rundir(const char *dir)
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

/* Makes the run's private directory, its manifest (an empty file the shim appends to) and its
 * identity. 0, or -1 (said on stderr). */
static int make_rundir(char *dir, size_t n, char *manifest, size_t mn, char *id, size_t idn)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, n, "%s/dlsync-run.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "dlsync run: cannot create the run's directory %s: %s\n", dir, strerror(errno));
        dir[0] = '\0';
        return -1;
    }
    snprintf(manifest, mn, "%s/manifest.jsonl", dir);
    int fd = open(manifest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "dlsync run: cannot create %s: %s\n", manifest, strerror(errno));
        return -1;
    }
    close(fd);
    unsigned long long r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        r = ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid();
    snprintf(id, idn, "%016llx", r);
    return 0;
}

/* The program's exit status turned into the run's, with --fail-on-race. */
static int gate_status(const run_options *o, int status, const dlt_gate_result *g)
{
    if (!o->fail_on_race || status != 0)
        return status;
    if (g->races > 0)
        return o->race_status;
    return g->uncovered ? DLS_EXIT_UNCHECKED : 0;
}

int dlt_cmd_run(int argc, char **argv)
{
    run_options o = {0};
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    char shim[PATH_MAX];
    if (dlt_find_shim(shim, sizeof shim) != 0) {
        fprintf(stderr, "dlsync run: cannot find libdlsync.so (looked for %s)\n",
                shim[0] ? shim : "../lib from this program");
        return DLS_EXIT_INTERNAL;
    }
    run_setup s = {0};
    char *log = absolute(o.log), *profiles = absolute(o.profiles), *supp = absolute(o.suppressions);
    char dir[PATH_MAX] = "", manifest[PATH_MAX + 32], tmplog[PATH_MAX + 32], id[24];
    s.log = log;
    s.profiles = profiles;
    s.suppressions = supp;
    /* Mode off is a run without dlsync: nothing to record. Without its directory the run goes on
     * unrecorded, unless the gate needs the record. */
    if (!(o.mode && strcmp(o.mode, "off") == 0)) {
        if (make_rundir(dir, sizeof dir, manifest, sizeof manifest, id, sizeof id) == 0) {
            s.manifest = manifest;
            s.run_id = id;
            if (!o.log && o.fail_on_race) {
                snprintf(tmplog, sizeof tmplog, "%s/log.%%p.%%n.jsonl", dir);
                s.log = tmplog;
            }
        } else {
            if (dir[0])
                remove_rundir(dir);
            dir[0] = '\0';
            if (o.fail_on_race) {
                free(log);
                free(profiles);
                free(supp);
                return DLS_EXIT_INTERNAL;
            }
        }
    }
    /* A program the loader will not preload into is named before it runs. */
    char path[PATH_MAX], file[PATH_MAX], why[2 * PATH_MAX];
    const char *reason = dls_program_find(o.program[0], getenv("PATH"), path, sizeof path) == 0
                             ? dls_program_unreachable(path, file, sizeof file)
                             : NULL;
    const char *unreachable = NULL;
    if (reason) {
        char safe[PATH_MAX];
        snprintf(why, sizeof why, "%s: %s", dlt_text_escape(file, safe, sizeof safe), reason);
        unreachable = why;
    }
    rc = set_environment(&o, shim, &s);
    int status = DLS_EXIT_INTERNAL, exec_err = 0;
    pid_t pid = 0;
    if (rc == 0) {
        fflush(NULL);
        status = run_child(o.program, &pid, &exec_err);
    }
    if (exec_err)
        say_exec_failed(o.program[0], exec_err);
    if (rc == 0 && !exec_err && status != DLS_EXIT_INTERNAL && s.manifest) {
        dlt_gate_result g;
        dlt_gate_read(s.manifest, s.run_id, pid, unreachable, &g);
        if (!o.quiet)
            dlt_gate_print(&g, o.mode ? o.mode : "fix", stderr);
        if (g.races > 0 && !o.log && o.fail_on_race && !o.quiet)
            fputs("dlsync run:   (run with --log FILE and read it with dlsync report FILE for the details)\n", stderr);
        status = gate_status(&o, status, &g);
        dlt_gate_free(&g);
    }
    if (dir[0])
        remove_rundir(dir);
    free(log);
    free(profiles);
    free(supp);
    return status;
}
