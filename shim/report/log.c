/* JSON-lines log writer (see log.h). */
#include "log.h"

#include "../common/config.h"
#include "../common/ownfd.h"
#include "log_head.h"
#include "run.h"
#include "warn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static dls_ownfd g_file = {.fd = -1}; /* written before dls_log_open is set, then read-only */
atomic_int dls_log_open;              /* 1 while records are written to g_file */
static char g_path[4096];             /* the expanded absolute path */
static char g_problem[4096 + 160];    /* why records are lost, once g_has_problem is 1 */
static atomic_int g_has_problem;      /* 0 none, 2 being written, 1 g_problem set */
static atomic_int g_capped;           /* the size limit held a record back */
static _Atomic uint64_t g_dropped;    /* records held back by the size limit */

const char *dls_log_rank(void)
{
    static const char *const vars[] = {
#define DLS_RANK_VARIABLE(NAME) #NAME,
#include "../common/options.def"
    };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = secure_getenv(vars[i]);
        if (v && *v)
            return v;
    }
    return NULL;
}

int dls_log_expand_path(const char *pattern, int pid, const char *rank, unsigned seq, char *buf, size_t n)
{
    size_t k = 0;
    for (const char *p = pattern; *p; p++) {
        char tmp[24];
        const char *add = tmp;
        if (p[0] == '%' && (p[1] == 'p' || p[1] == 'n')) {
            snprintf(tmp, sizeof tmp, "%u", p[1] == 'p' ? (unsigned)pid : seq);
            p++;
        } else if (p[0] == '%' && p[1] == 'r') {
            add = rank ? rank : DLS_LOG_NO_RANK;
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            add = "%";
            p++;
        } else {
            tmp[0] = *p;
            tmp[1] = '\0';
        }
        size_t l = strlen(add);
        if (k + l >= n)
            return -1;
        memcpy(buf + k, add, l);
        k += l;
    }
    if (k >= n)
        return -1;
    buf[k] = '\0';
    return 0;
}

/* The kinds of record still written past the size limit: what a reader needs to trust the log. */
static int essential(const dls_rec *j)
{
    static const char *const kinds[] = {"start\"", "race\"", "warning\"", "fallback\"", "summary\"", "log_capped\""};
    const char *name = j->buf + 7; /* after {"ev":" */
    size_t left = j->len > 7 ? j->len - 7 : 0;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t n = strlen(kinds[i]);
        if (n <= left && memcmp(name, kinds[i], n) == 0)
            return 1;
    }
    return 0;
}

static void write_start(void)
{
    dls_rec j;
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    dls_log_begin(&j, "start");
    dls_rec_str(&j, "exe", exe);
    dls_rec_str(&j, "mode", dls_mode_name(dls_config_get()->mode));
    dls_rec_str(&j, "version", DLS_VERSION);
    const char *rank = dls_log_rank();
    char *end = NULL;
    long r = rank ? strtol(rank, &end, 10) : 0;
    if (rank && end && *end == '\0' && end != rank)
        dls_rec_i64(&j, "rank", r);
    else
        dls_rec_raw(&j, "rank", "null");
    dls_run_identity(&j);
    dls_rec_u64(&j, "log_limit", dls_config_get()->log_limit);
    dls_log_write(&j);
}

/* Remembers why records are lost (the first reason only). */
static void set_problem(const char *fmt, ...) DLS_PRINTF(1, 2);
static void set_problem(const char *fmt, ...)
{
    if (atomic_exchange(&g_has_problem, 2) != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_problem, sizeof g_problem, fmt, ap);
    va_end(ap);
    atomic_store_explicit(&g_has_problem, 1, memory_order_release);
}

/* The run identity in the last start record among the last (or else the first) 64 KiB of the
 * file at g_path, which g_file has open; "" when there is none. */
static void last_run_of(char *id, size_t n)
{
    id[0] = '\0';
    int fd = open(g_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0)
        return;
    static const char key[] = "\"run\":\"";
    static char buf[65536 + 1];
    if (fstat(fd, &st) == 0 && st.st_dev == g_file.dev && st.st_ino == g_file.ino) {
        off_t at = st.st_size > 65536 ? st.st_size - 65536 : 0;
        for (int pass = 0; pass < 2 && !id[0]; pass++, at = 0) {
            ssize_t got = pread(fd, buf, sizeof buf - 1, at);
            buf[got > 0 ? got : 0] = '\0';
            for (char *p = buf, *hit; (hit = strstr(p, key)) != NULL; p = hit + 1) {
                size_t len = strcspn(hit + sizeof key - 1, "\"\n");
                if (len < n)
                    snprintf(id, n, "%.*s", (int)len, hit + sizeof key - 1);
            }
            if (at == 0)
                break;
        }
    }
    close(fd);
}

/* Says once when the log just opened already holds another run's records: they stay, and this
 * process's records are appended after them. */
static void warn_if_foreign(void)
{
    if (!g_file.regular || g_file.opened_size == 0)
        return;
    char id[72];
    last_run_of(id, sizeof id);
    if (strcmp(id, dls_run_id()) != 0)
        dls_warn_once("log-foreign",
                      "DLSYNC_LOG=%s already holds the records of another run; appending to it (%%n in the name "
                      "makes a new file per process)",
                      g_path);
}

/* Expands the pattern into g_path (absolute: relative to the directory at open) and opens it; a
 * pattern with %n gets the smallest number that makes a new file. 0, or an errno value. */
static int open_path(const char *pattern)
{
    char rel[sizeof g_path];
    int exclusive = strstr(pattern, "%n") != NULL;
    for (unsigned seq = 0; seq < 100000; seq++) {
        if (dls_log_expand_path(pattern, (int)getpid(), dls_log_rank(), seq, rel, sizeof rel) != 0)
            return ENAMETOOLONG;
        char cwd[sizeof g_path];
        if (rel[0] == '/' || !getcwd(cwd, sizeof cwd))
            snprintf(g_path, sizeof g_path, "%s", rel);
        else if ((size_t)snprintf(g_path, sizeof g_path, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, rel) >=
                 sizeof g_path)
            return ENAMETOOLONG;
        int err = exclusive ? dls_ownfd_create(g_path, &g_file) : dls_ownfd_open_append(g_path, &g_file);
        if (!exclusive || err != EEXIST)
            return err;
    }
    return EEXIST;
}

/* Tells the run which log this process writes (or why it has none). */
static void register_log(const char *path, const char *error)
{
    if (!dls_run_has_manifest())
        return;
    dls_rec j;
    dls_run_begin(&j, "log");
    dls_rec_str(&j, "path", path);
    dls_rec_str(&j, "error", error);
    dls_run_append(&j);
}

static void open_log(void)
{
    const char *pattern = dls_config_get()->log_path;
    if (!pattern) {
        register_log(NULL, NULL);
        return;
    }
    int err = open_path(pattern);
    if (err == ENAMETOOLONG) {
        set_problem("DLSYNC_LOG path is too long");
        dls_warn_once("log-path", "DLSYNC_LOG path is too long; no log is written");
        register_log(NULL, g_problem);
        return;
    }
    if (err) {
        set_problem("cannot open DLSYNC_LOG=%s (%s)", g_path,
                    err == ENXIO    ? "a FIFO without a reader"
                    : err == EEXIST ? "no free %n number"
                                    : strerror(err));
        dls_warn_once("log-open", "%s; no log is written", g_problem);
        register_log(g_path, g_problem);
        return;
    }
    warn_if_foreign();
    atomic_store(&dls_log_open, 1);
    write_start();
    register_log(g_path, NULL);
}

/* In a forked child: its own thread id, its own file when the path names the pid or %n, and in
 * every case a start record of its own and its line in the run's manifest. */
static void after_fork_child(void)
{
    dls_log_head_forked();
    const char *pattern = dls_config_get()->log_path;
    if (pattern && (strstr(pattern, "%p") || strstr(pattern, "%n"))) {
        if (atomic_exchange(&dls_log_open, 0))
            dls_ownfd_close(&g_file);
        atomic_store(&g_has_problem, 0);
        atomic_store(&g_capped, 0);
        atomic_store(&g_dropped, 0);
        open_log();
        return;
    }
    if (atomic_load(&dls_log_open))
        write_start();
    register_log(pattern ? g_path : NULL, atomic_load(&g_has_problem) == 1 ? g_problem : NULL);
}

const char *dls_log_problem(void)
{
    return atomic_load_explicit(&g_has_problem, memory_order_acquire) == 1 ? g_problem : NULL;
}

const char *dls_log_path(void)
{
    return dls_config_get()->log_path && g_path[0] ? g_path : NULL;
}

uint64_t dls_log_dropped(void)
{
    return atomic_load_explicit(&g_dropped, memory_order_relaxed);
}

atomic_int dls_log_ready; /* init_once has run */

static void init_once(void)
{
    (void)dls_log_now_ns(); /* the clock's origin, before the first record */
    pthread_atfork(NULL, NULL, after_fork_child);
    open_log();
    atomic_store_explicit(&dls_log_ready, 1, memory_order_release);
}

int dls_log_enabled_first(void)
{
    pthread_once(&g_once, init_once);
    return atomic_load_explicit(&dls_log_open, memory_order_acquire);
}

/* The record that says, once, that the size limit holds exchange records back from here on. */
static void write_capped(uint64_t limit)
{
    dls_warn_once("log-capped",
                  "DLSYNC_LOG=%s reached its limit of %llu bytes; no more exchange records are written (races, "
                  "warnings and the summary still are; DLSYNC_LOG_LIMIT or dlsync run --log-limit changes the limit)",
                  g_path, (unsigned long long)limit);
    dls_rec j;
    dls_log_begin(&j, "log_capped");
    dls_rec_u64(&j, "limit", limit);
    dls_log_write(&j);
}

void dls_log_write(dls_rec *j)
{
    dls_rec_bytes(j, "}\n", 2);
    int capped_now = 0;
    uint64_t limit = dls_config_get()->log_limit;
    if (!j->failed && atomic_load_explicit(&dls_log_open, memory_order_acquire)) {
        int keep = atomic_load_explicit(&g_capped, memory_order_relaxed) ? essential(j) : -1;
        /* one write per line: O_APPEND keeps lines whole */
        int err = keep == 0 ? EFBIG : dls_ownfd_write(&g_file, j->buf, j->len, keep == 1 ? 0 : limit);
        if (err == EFBIG && keep < 0 && essential(j))
            err = dls_ownfd_write(&g_file, j->buf, j->len, 0);
        if (err == EFBIG) {
            atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
            capped_now = !atomic_exchange(&g_capped, 1);
        } else if (err && atomic_exchange(&dls_log_open, 0)) {
            set_problem("%s DLSYNC_LOG=%s",
                        err == ESTALE ? "the program closed or replaced the descriptor of" : "writing failed for",
                        g_path);
            dls_warn_once("log-write", "%s; no more records are written", g_problem);
        }
    }
    dls_rec_done(j);
    if (capped_now)
        write_capped(limit);
}
