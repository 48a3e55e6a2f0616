/* What a run checked (see gate.h). */
#include "gate.h"
#include "grow.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logread.h"
#include "tally.h"
#include "textesc.h"

typedef struct {
    long long pid;
    unsigned long long start;
    char *exe, *log, *problem, *why;
    char *exec_why; /* it exec'd a program dlsync did not enter (cleared by a later line of its own) */
    int registered, ended, last_end, inert, checked, log_seen;
    long long races, suppressed, exchanges, injected, fallbacks, log_races, log_suppressed;
} proc;

typedef struct {
    const char *run_id;
    proc *v;
    size_t n, cap;
    dlt_tally index; /* "pid/start" -> aux = index + 1 */
    dlt_tally logs;  /* log paths named in the manifest */
    char **spawned;  /* "pid P (exe): why" of programs started as new processes dlsync did not enter */
    size_t nspawned;
    int oom;
} state;

static long long get_int(const dlt_json_value *o, const char *key)
{
    long long v = 0;
    return dlt_json_get_int(o, key, &v) ? v : 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Sets *slot to a copy of the formatted text unless it is set already (the first reason stays). */
static void first_reason(char **slot, const char *fmt, const char *a, const char *b)
{
    if (*slot)
        return;
    char buf[2048], sa[1024], sb[1024];
    snprintf(buf, sizeof buf, fmt, dlt_text_escape(a, sa, sizeof sa), dlt_text_escape(b, sb, sizeof sb));
    *slot = strdup(buf);
}

/* The process of a manifest line or start record, made when new; NULL when memory runs out. */
static proc *proc_of(state *s, const dlt_json_value *o)
{
    long long pid = get_int(o, "pid");
    unsigned long long start = (unsigned long long)get_int(o, "proc_start");
    char key[64];
    snprintf(key, sizeof key, "%lld/%llu", pid, start);
    int fresh;
    dlt_tally_entry *e = dlt_tally_add(&s->index, key, &fresh);
    if (!e)
        return NULL;
    if (!fresh)
        return &s->v[e->aux - 1];
    proc *nv = dlt_grow(s->v, &s->cap, s->n + 1, sizeof *nv, 16);
    if (!nv)
        return NULL;
    s->v = nv;
    proc *p = &s->v[s->n++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->start = start;
    p->checked = -1;
    p->exe = dup_or_null(dlt_json_get_str(o, "exe"));
    e->aux = (long long)s->n;
    return p;
}

/* A process's log: remembered for the process and for reading. */
static void set_log(state *s, proc *p, const char *path)
{
    if (!path || (p->log && strcmp(p->log, path) == 0))
        return;
    free(p->log);
    p->log = strdup(path);
    if (!dlt_tally_add(&s->logs, path, NULL))
        s->oom = 1;
}

static int manifest_line(dlt_log_record *r, void *ctx)
{
    state *s = ctx;
    const char *run = dlt_json_get_str(r->obj, "run");
    if (!run || strcmp(run, s->run_id) != 0)
        return 0;
    proc *p = proc_of(s, r->obj);
    if (!p)
        return -1;
    const char *error = dlt_json_get_str(r->obj, "error"), *log_error = dlt_json_get_str(r->obj, "log_error");
    if (strcmp(r->ev, "log") == 0 || strcmp(r->ev, "end") == 0) {
        free(p->exec_why);
        p->exec_why = NULL;
    }
    if (strcmp(r->ev, "log") == 0) {
        p->registered = 1;
        p->last_end = 0;
        set_log(s, p, dlt_json_get_str(r->obj, "path"));
        if (error)
            first_reason(&p->problem, "its log could not be written: %s%s", error, "");
    } else if (strcmp(r->ev, "end") == 0) {
        p->ended = p->last_end = 1;
        set_log(s, p, dlt_json_get_str(r->obj, "log"));
        if (log_error)
            first_reason(&p->problem, "its log was lost: %s%s", log_error, "");
        const dlt_json_value *checked = dlt_json_get(r->obj, "checked");
        if (checked && checked->type == DLT_JSON_BOOL) {
            p->checked = checked->boolean;
            free(p->why);
            p->why = dup_or_null(dlt_json_get_str(r->obj, "why"));
        }
        p->races += get_int(r->obj, "races");
        p->suppressed += get_int(r->obj, "suppressed");
        p->exchanges += get_int(r->obj, "exchanges");
        p->injected += get_int(r->obj, "injected");
        p->fallbacks += get_int(r->obj, "fallbacks");
    } else if (strcmp(r->ev, "exec") == 0) {
        const dlt_json_value *spawn = dlt_json_get(r->obj, "spawn");
        int spawned = spawn && spawn->type == DLT_JSON_BOOL && spawn->boolean;
        char text[4096], se[1024], sp[1024], sw[1024];
        dlt_text_escape(dlt_json_get_str(r->obj, "path"), sp, sizeof sp);
        dlt_text_escape(dlt_json_get_str(r->obj, "why"), sw, sizeof sw);
        if (spawned)
            snprintf(text, sizeof text, "pid %lld (%s) started %s, which dlsync did not enter: %s", p->pid,
                     dlt_text_escape(p->exe, se, sizeof se), sp, sw);
        else
            snprintf(text, sizeof text, "it started %s, which dlsync did not enter: %s", sp, sw);
        char *why = strdup(text);
        if (spawned) {
            char **nv = why ? realloc(s->spawned, (s->nspawned + 1) * sizeof *nv) : NULL;
            if (!nv) {
                free(why);
                return -1;
            }
            s->spawned = nv;
            s->spawned[s->nspawned++] = why;
        } else {
            free(p->exec_why);
            p->exec_why = why;
        }
    } else if (strcmp(r->ev, "inert") == 0) {
        p->inert = 1;
        first_reason(&p->why,
                     "a second libdlsync.so (%s) stayed inert in it beside %s, which did not report to the run",
                     dlt_json_get_str(r->obj, "self"), dlt_json_get_str(r->obj, "active"));
    }
    return s->oom ? -1 : 0;
}

/* Reading one log: which of its pids are this run's processes. */
typedef struct {
    state *s;
    dlt_tally pids; /* pid -> aux = index + 1 of its process, 0 when it is another run's */
} log_reading;

static int log_record(dlt_log_record *r, void *ctx)
{
    log_reading *lr = ctx;
    char pid[32];
    snprintf(pid, sizeof pid, "%lld", get_int(r->obj, "pid"));
    dlt_tally_entry *e = dlt_tally_add(&lr->pids, pid, NULL);
    if (!e)
        return -1;
    if (strcmp(r->ev, "start") == 0) {
        const char *run = dlt_json_get_str(r->obj, "run");
        char key[64];
        snprintf(key, sizeof key, "%s/%llu", pid, (unsigned long long)get_int(r->obj, "proc_start"));
        dlt_tally_entry *p = run && strcmp(run, lr->s->run_id) == 0 ? dlt_tally_find(&lr->s->index, key) : NULL;
        e->aux = p ? p->aux : 0;
        if (p)
            lr->s->v[p->aux - 1].log_seen = 1;
    } else if (e->aux) {
        proc *p = &lr->s->v[e->aux - 1];
        if (dlt_json_get(r->obj, "suppressed"))
            p->log_suppressed++;
        else
            p->log_races++;
    }
    return 0;
}

/* Reads the log at path; on failure every process whose log it is gets the reason. */
static void read_log(state *s, const char *path)
{
    static const char *const kinds[] = {"start", "race", NULL};
    char *msg = NULL;
    size_t len = 0;
    FILE *errs = open_memstream(&msg, &len);
    dlt_log_scan_opts o = {.pipes = 0, .kinds = kinds, .errs = errs};
    log_reading lr = {.s = s};
    long damaged = 0;
    int rc = dlt_log_scan(path, &o, log_record, &lr, &damaged);
    if (errs)
        fclose(errs);
    if (rc != 0) {
        /* the first message, without its "dlsync: " and newline */
        const char *m = msg && strncmp(msg, "dlsync: ", 8) == 0 ? msg + 8 : msg ? msg : "cannot be read";
        char first[1024];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(m, "\n"), m);
        for (size_t i = 0; i < s->n; i++)
            if (s->v[i].log && strcmp(s->v[i].log, path) == 0)
                first_reason(&s->v[i].problem, "its log cannot be read back: %s%s", first, "");
    }
    free(msg);
    dlt_tally_free(&lr.pids);
}

/* 1 when the process is still running (same pid, same start time). */
static int still_running(const proc *p)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", p->pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *f = strrchr(buf, ')');
    for (int field = 2; f && field < 22; field++)
        f = strchr(f + 1, ' ');
    return f && strtoull(f + 1, NULL, 10) == p->start && buf[0] && strstr(buf, ") Z ") == NULL;
}

/* Why process p was not covered, or NULL when it was. */
static const char *uncovered(const proc *p)
{
    if (p->exec_why)
        return p->exec_why;
    if (!p->registered && p->inert)
        return p->why;
    if (p->problem)
        return p->problem;
    if (!p->last_end)
        return still_running(p) ? "still running when the program ended (a daemon?): its end was not seen"
                                : "ended without dlsync's summary: killed by a signal, or it exec'd a program dlsync "
                                  "could not enter (static, set-user-ID, LD_PRELOAD removed)";
    if (p->log && !p->log_seen)
        return "its log does not hold its start record (was the file replaced or truncated?)";
    if (p->checked == 0)
        return p->why ? p->why : "not checked";
    return NULL;
}

static void add_reason(dlt_gate_result *res, long long pid, const char *exe, const char *why)
{
    res->uncovered++;
    if (res->nreasons >= DLT_GATE_REASONS)
        return;
    char buf[4096], se[1024];
    if (exe)
        snprintf(buf, sizeof buf, "pid %lld (%s): %s", pid, dlt_text_escape(exe, se, sizeof se), why);
    else
        snprintf(buf, sizeof buf, "%s", why);
    res->reasons[res->nreasons] = strdup(buf);
    if (res->reasons[res->nreasons])
        res->nreasons++;
}

static long long max_ll(long long a, long long b)
{
    return a > b ? a : b;
}

int dlt_gate_read(const char *path, const char *run_id, pid_t top, const char *top_problem, dlt_gate_result *res)
{
    memset(res, 0, sizeof *res);
    state s = {.run_id = run_id};
    dlt_log_scan_opts o = {.pipes = 0};
    long damaged = 0;
    int rc = dlt_log_scan(path, &o, manifest_line, &s, &damaged);
    if (rc == 0 && damaged) {
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && !s.oom && i < s.logs.cap; i++)
        if (s.logs.slots[i].key)
            read_log(&s, s.logs.slots[i].key);
    int top_seen = 0;
    for (size_t i = 0; i < s.n; i++) {
        proc *p = &s.v[i];
        top_seen |= p->pid == (long long)top;
        res->processes++;
        res->races += max_ll(p->races, p->log_races);
        res->suppressed += max_ll(p->suppressed, p->log_suppressed);
        res->exchanges += p->exchanges;
        res->injected += p->injected;
        res->fallbacks += p->fallbacks;
        const char *why = uncovered(p);
        if (why)
            add_reason(res, p->pid, p->exe, why);
    }
    for (size_t i = 0; i < s.nspawned; i++) {
        res->processes++;
        add_reason(res, 0, NULL, s.spawned[i]);
        free(s.spawned[i]);
    }
    free(s.spawned);
    if (rc != 0) {
        res->processes++;
        add_reason(res, (long long)top, "?", "the run's record of its processes could not be read");
    } else if (!top_seen) {
        res->processes++;
        add_reason(res, (long long)top, "the program",
                   top_problem ? top_problem
                               : "dlsync did not start in it (LD_PRELOAD was not applied, or the run's directory "
                                 "was out of its reach)");
    }
    for (size_t i = 0; i < s.n; i++) {
        free(s.v[i].exe);
        free(s.v[i].log);
        free(s.v[i].problem);
        free(s.v[i].why);
        free(s.v[i].exec_why);
    }
    free(s.v);
    dlt_tally_free(&s.index);
    dlt_tally_free(&s.logs);
    return rc == 0 && !s.oom ? 0 : -1;
}

static const char *plural(char *buf, size_t n, long long v, const char *one, const char *many)
{
    snprintf(buf, n, "%lld %s", v, v == 1 ? one : many);
    return buf;
}

void dlt_gate_print(const dlt_gate_result *r, const char *mode, FILE *out)
{
    char procs[48], races[48], exch[48], inj[48], fb[48];
    plural(procs, sizeof procs, r->processes, "process", "processes");
    plural(races, sizeof races, r->races, "race", "races");
    plural(exch, sizeof exch, r->exchanges, "exchange", "exchanges");
    if (strcmp(mode, "check") == 0 && r->uncovered)
        fprintf(out, "dlsync run: check summary: NOT CHECKED: %lld of %s; %s reported, %lld suppressed, %s seen\n",
                r->uncovered, procs, races, r->suppressed, exch);
    else if (strcmp(mode, "check") == 0)
        fprintf(out, "dlsync run: check summary: %s checked, %s reported, %lld suppressed, %s checked\n", procs, races,
                r->suppressed, exch);
    else if (strcmp(mode, "fix") == 0)
        fprintf(out, "dlsync run: fix summary: %s%s, %s injected, %s, %s\n", r->uncovered ? "NOT COVERED: " : "", procs,
                plural(inj, sizeof inj, r->injected, "wait", "waits"),
                plural(fb, sizeof fb, r->fallbacks, "fallback", "fallbacks"), exch);
    else
        fprintf(out, "dlsync run: %s summary: %s%s, %s\n", mode, r->uncovered ? "NOT COVERED: " : "", procs, exch);
    for (int i = 0; i < r->nreasons; i++)
        fprintf(out, "dlsync run:   not %s: %s\n", strcmp(mode, "check") == 0 ? "checked" : "covered", r->reasons[i]);
    if (r->uncovered > r->nreasons)
        fprintf(out, "dlsync run:   and %lld more\n", r->uncovered - r->nreasons);
}

void dlt_gate_free(dlt_gate_result *r)
{
    for (int i = 0; i < r->nreasons; i++)
        free(r->reasons[i]);
    memset(r, 0, sizeof *r);
}
