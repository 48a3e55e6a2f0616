/* The head every log record begins with (see log_head.h): the clock, the process and thread
 * ids, and the record's first keys. Below log.c and run.c, which both begin records. */
#include "log_head.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t g_clock_once = PTHREAD_ONCE_INIT;
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

static int pid_now(void)
{
    if (!g_pid)
        g_pid = (int)getpid();
    return g_pid;
}

/* What every record of the calling thread begins with and what changes rarely: the text of
 * `,"pid":P,"tid":T` (made again in a forked child, whose ids differ), and the decimal digits of
 * the last record's second (a timestamp is written as those digits and nine for the nanoseconds
 * when its second is the same). Writing them afresh for each record costs it about 280
 * instructions more (make bench's log-record figure, over its budget then). */
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
        e = dls_rec_utoa((uint64_t)pid_now(), e + 7);
        memcpy(e, ",\"tid\":", 7);
        e = dls_rec_utoa((uint64_t)dls_log_tid(), e + 7);
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
        return dls_rec_utoa(t, d);
    if (sec != h->sec || !h->sec_len) {
        h->sec_len = (unsigned char)(dls_rec_utoa(sec, h->sec_text) - h->sec_text);
        h->sec = sec;
    }
    memcpy(d, h->sec_text, sizeof h->sec_text);
    return dls_rec_utoa9((uint32_t)(t - sec * 1000000000u), d + h->sec_len);
}

void dls_log_begin_n(dls_rec *j, const char *ev, size_t n)
{
    uint64_t t = dls_log_now_ns();
    dls_rec_start(j);
    char *d = dls_rec_room(j, n + 96);
    if (!d)
        return;
    head *h = &t_head;
    memcpy(d, "{\"ev\":\"", 7);
    memcpy(d + 7, ev, n);
    memcpy(d + 7 + n, "\",\"t\":", 6);
    d = put_ids(h, put_time(h, d + 13 + n, t));
    j->len = (size_t)(d - j->buf);
}

void dls_log_head_forked(void)
{
    t_tid = 0;
    g_pid = 0;
}
