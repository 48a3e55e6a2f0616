/* JSON-lines log writer (see log.h). */
#include "log.h"

#include "../common/config.h"
#include "../common/ownfd.h"
#include "warn.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_once_t g_clock_once = PTHREAD_ONCE_INIT;
static dls_ownfd g_file = {.fd = -1}; /* written before dls_log_open is set, then read-only */
atomic_int dls_log_open;              /* 1 while records are written to g_file */
static char g_path[4096];             /* the expanded path, for warnings */
static uint64_t g_real0, g_mono0;
static atomic_int g_clock_ready; /* init_clock has run */
static __thread int t_tid;
static int g_pid; /* read once per process (a forked child reads its own) */

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void init_clock(void)
{
    g_real0 = clock_ns(CLOCK_REALTIME);
    g_mono0 = clock_ns(CLOCK_MONOTONIC);
    atomic_store_explicit(&g_clock_ready, 1, memory_order_release);
}

uint64_t dls_log_now_ns(void)
{
    if (!atomic_load_explicit(&g_clock_ready, memory_order_acquire))
        pthread_once(&g_clock_once, init_clock);
    return g_real0 + (clock_ns(CLOCK_MONOTONIC) - g_mono0);
}

int dls_log_tid(void)
{
    if (t_tid == 0)
        t_tid = (int)syscall(SYS_gettid);
    return t_tid;
}

const char *dls_log_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = secure_getenv(vars[i]);
        if (v && *v)
            return v;
    }
    return NULL;
}

int dls_log_expand_path(const char *pattern, int pid, const char *rank, char *buf, size_t n)
{
    size_t k = 0;
    for (const char *p = pattern; *p; p++) {
        char tmp[24];
        const char *add = tmp;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%d", pid);
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

static void write_start(void)
{
    dls_json j;
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    dls_log_begin(&j, "start");
    dls_json_str(&j, "exe", exe);
    dls_json_str(&j, "mode", dls_mode_name(dls_config_get()->mode));
    dls_json_str(&j, "version", DLS_VERSION);
    const char *rank = dls_log_rank();
    char *end = NULL;
    long r = rank ? strtol(rank, &end, 10) : 0;
    if (rank && end && *end == '\0' && end != rank)
        dls_json_i64(&j, "rank", r);
    else
        dls_json_raw(&j, "rank", "null");
    dls_log_write(&j);
}

static void open_log(void)
{
    const char *pattern = dls_config_get()->log_path;
    if (!pattern)
        return;
    if (dls_log_expand_path(pattern, (int)getpid(), dls_log_rank(), g_path, sizeof g_path) != 0) {
        dls_warn_once("log-path", "DLSYNC_LOG path is too long; no log is written");
        return;
    }
    int err = dls_ownfd_open_append(g_path, &g_file);
    if (err) {
        dls_warn_once("log-open", "cannot open DLSYNC_LOG=%s (%s); no log is written", g_path,
                      err == ENXIO ? "a FIFO without a reader" : strerror(err));
        return;
    }
    atomic_store(&dls_log_open, 1);
    write_start();
}

/* In a forked child: its own thread id, and its own file when the path names the pid. */
static void after_fork_child(void)
{
    t_tid = 0;
    g_pid = 0;
    const char *pattern = dls_config_get()->log_path;
    if (atomic_load(&dls_log_open) && pattern && strstr(pattern, "%p")) {
        atomic_store(&dls_log_open, 0);
        dls_ownfd_close(&g_file);
        open_log();
    }
}

atomic_int dls_log_ready; /* init_once has run */

static void init_once(void)
{
    pthread_once(&g_clock_once, init_clock);
    pthread_atfork(NULL, NULL, after_fork_child);
    open_log();
    atomic_store_explicit(&dls_log_ready, 1, memory_order_release);
}

int dls_log_enabled_first(void)
{
    pthread_once(&g_once, init_once);
    return atomic_load_explicit(&dls_log_open, memory_order_acquire);
}

static int pid_now(void)
{
    if (!g_pid)
        g_pid = (int)getpid();
    return g_pid;
}

/* What every record of the calling thread begins with and what changes rarely: the text of
 * `,"pid":P,"tid":T` (made again in a forked child, whose ids differ), and the decimal digits of
 * the last record's second (a timestamp is written as those digits and nine for the nanoseconds
 * when its second is the same). */
typedef struct {
    int pid;
    unsigned char ids_len, sec_len;
    char ids[46];
    uint64_t sec;
    char sec_text[24];
} head;

static __thread head t_head;

/* Writes `,"pid":P,"tid":T` at d (room for 46 bytes); returns the end. */
static char *put_ids(head *h, char *d)
{
    if (h->pid != pid_now()) {
        char *e = h->ids;
        memcpy(e, ",\"pid\":", 7);
        e = dls_json_utoa((uint64_t)pid_now(), e + 7);
        memcpy(e, ",\"tid\":", 7);
        e = dls_json_utoa((uint64_t)dls_log_tid(), e + 7);
        h->ids_len = (unsigned char)(e - h->ids);
        h->pid = pid_now();
    }
    memcpy(d, h->ids, sizeof h->ids);
    return d + h->ids_len;
}

/* Writes the timestamp t (nanoseconds) in decimal at d (room for 24 bytes); returns the end. */
static char *put_time(head *h, char *d, uint64_t t)
{
    uint64_t sec = t / 1000000000u;
    if (!sec) /* no digits of a second to put in front */
        return dls_json_utoa(t, d);
    if (sec != h->sec || !h->sec_len) {
        h->sec_len = (unsigned char)(dls_json_utoa(sec, h->sec_text) - h->sec_text);
        h->sec = sec;
    }
    memcpy(d, h->sec_text, sizeof h->sec_text);
    return dls_json_utoa9((uint32_t)(t - sec * 1000000000u), d + h->sec_len);
}

/* Copies the n bytes of s to d: a record kind's name, 4 to 16 bytes as a rule, in two overlapping
 * words instead of a call. */
static void copy_name(char *d, const char *s, size_t n)
{
    uint64_t a, b;
    uint32_t c, e;
    if (n >= 8 && n <= 16) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(&c, s, 4);
        memcpy(&e, s + n - 4, 4);
        memcpy(d, &c, 4);
        memcpy(d + n - 4, &e, 4);
    } else {
        memcpy(d, s, n);
    }
}

void dls_log_begin_n(dls_json *j, const char *ev, size_t n)
{
    uint64_t t = dls_log_now_ns();
    dls_json_start(j);
    char *d = dls_json_room(j, n + 96);
    if (!d)
        return;
    head *h = &t_head;
    DLS_JSON_TLS_ONCE(h);
    memcpy(d, "{\"ev\":\"", 7);
    copy_name(d + 7, ev, n);
    memcpy(d + 7 + n, "\",\"t\":", 6);
    d = put_ids(h, put_time(h, d + 13 + n, t));
    j->len = (size_t)(d - j->buf);
}

void dls_log_write(dls_json *j)
{
    dls_json_bytes(j, "}\n", 2);
    if (!j->failed && atomic_load_explicit(&dls_log_open, memory_order_acquire)) {
        /* one write per line: O_APPEND keeps lines whole */
        int err = dls_ownfd_write(&g_file, j->buf, j->len);
        if (err && atomic_exchange(&dls_log_open, 0))
            dls_warn_once("log-write", "%s DLSYNC_LOG=%s; no more records are written",
                          err == ESTALE ? "the program closed or replaced the descriptor of" : "writing failed for",
                          g_path);
    }
    dls_json_done(j);
}
