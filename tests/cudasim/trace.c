/* trace.c: the trace writer (the format and its guarantees are in trace.h): the file, the
 * stamp, the calling thread's current call, and the lines that describe an operation.
 *
 * Each line is formatted into one buffer and written with one write(2) under the trace mutex,
 * so a program that dies leaves every line it wrote, and the file's order is stamp order. */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cudasim.h"
#include "trace.h"

atomic_int dls_sim_trace_enabled;

static pthread_mutex_t g_trace_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_path;  /* CUDASIM_TRACE, copied at load */
static int g_fd = -1; /* opened at the first line */
static int g_broken;  /* could not open, or a forked child without %p: write nothing */
static uint64_t g_stamp;
static char *g_buf; /* the line being written (trace mutex) */
static size_t g_cap, g_len;

static __thread uint32_t t_call;
static __thread pid_t t_tid;

static pid_t my_tid(void)
{
    if (!t_tid)
        t_tid = (pid_t)syscall(SYS_gettid);
    return t_tid;
}

/* PATH with each %p replaced by the pid (malloc'd; NULL when out of memory). */
static char *expand_path(void)
{
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    size_t n = 1;
    for (const char *p = g_path; *p; p++)
        n += p[0] == '%' && p[1] == 'p' ? strlen(pid) : 1;
    char *out = malloc(n), *o = out;
    if (!out)
        return NULL;
    for (const char *p = g_path; *p; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o = stpcpy(o, pid);
            p++;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

/* Opens the file at the first line (trace mutex held). 0, or -1 when nothing is to be written. */
static int open_file(void)
{
    if (g_fd >= 0)
        return 0;
    if (g_broken)
        return -1;
    char *path = expand_path();
    g_fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    if (g_fd < 0) {
        fprintf(stderr, "cudasim: cannot open the trace CUDASIM_TRACE=%s; tracing is off\n", g_path);
        g_broken = 1;
    }
    free(path);
    return g_fd >= 0 ? 0 : -1;
}

/* Appends fmt's text to the line buffer (trace mutex held). */
static void vappend(const char *fmt, va_list ap)
{
    for (;;) {
        va_list aq;
        va_copy(aq, ap);
        int n = vsnprintf(g_buf ? g_buf + g_len : NULL, g_buf ? g_cap - g_len : 0, fmt, aq);
        va_end(aq);
        if (n < 0)
            return;
        if (g_buf && g_len + (size_t)n < g_cap) {
            g_len += (size_t)n;
            return;
        }
        size_t cap = (g_cap ? g_cap : 256) * 2;
        while (cap <= g_len + (size_t)n)
            cap *= 2;
        char *b = realloc(g_buf, cap);
        if (!b)
            abort(); /* test infrastructure */
        g_buf = b;
        g_cap = cap;
    }
}

static void append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void append(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(fmt, ap);
    va_end(ap);
}

/* Starts a line: takes the trace mutex and writes the stamp. Returns -1 (mutex released) when
 * nothing is to be written. */
static int line_begin(void)
{
    pthread_mutex_lock(&g_trace_lock);
    if (open_file() != 0) {
        pthread_mutex_unlock(&g_trace_lock);
        return -1;
    }
    g_len = 0;
    append("%llu ", (unsigned long long)++g_stamp);
    return 0;
}

/* Ends the line: writes it whole and releases the mutex. */
static void line_end(void)
{
    append("\n");
    for (size_t off = 0; off < g_len;) {
        ssize_t n = write(g_fd, g_buf + off, g_len - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    pthread_mutex_unlock(&g_trace_lock);
}

void dls_sim_trace_line(const char *fmt, ...)
{
    if (line_begin() != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vappend(fmt, ap);
    va_end(ap);
    line_end();
}

uint32_t dls_sim_trace_call_begin(uint32_t call, const char *name)
{
    dls_sim_trace_line("C %u %d %s", call, (int)my_tid(), name);
    uint32_t outer = t_call;
    t_call = call;
    return outer;
}

void dls_sim_trace_call_end(uint32_t call, uint32_t outer)
{
    t_call = outer;
    dls_sim_trace_line("R %u", call);
}

void dls_sim_trace_body(uint32_t call, int done)
{
    dls_sim_trace_line("%s %u", done ? "D" : "B", call);
}

uint32_t dls_sim_trace_call(void)
{
    return t_call;
}

void cudasim_trace_note(const char *fmt, ...)
{
    if (!SIM_TRACING() || !fmt || line_begin() != 0)
        return;
    append("N 0 %d ", (int)my_tid());
    size_t from = g_len;
    va_list ap;
    va_start(ap, fmt);
    vappend(fmt, ap);
    va_end(ap);
    for (size_t i = from; i < g_len; i++) /* one note, one line */
        if (g_buf[i] == '\n' || g_buf[i] == '\r')
            g_buf[i] = ' ';
    line_end();
}

void dls_sim_trace_kernel_accesses(dls_sim_op *op)
{
    const struct CUfunc_st *k = op->u.k.f;
    for (unsigned i = 0; i < k->nparams; i++) {
        if (k->sizes[i] != 8)
            continue;
        uint64_t v;
        memcpy(&v, op->u.k.buf + k->offsets[i], sizeof v);
        uintptr_t base;
        size_t size;
        int is_host;
        struct CUctx_st *ctx;
        if (dls_sim_mem_find((const void *)(uintptr_t)v, &base, &size, &is_host, &ctx) != 0)
            continue;
        dls_sim_access *a = realloc(op->acc, (op->nacc + 1) * sizeof *a);
        if (!a)
            abort();
        op->acc = a;
        op->acc[op->nacc++] = (dls_sim_access){(uintptr_t)v, base + size - (uintptr_t)v};
    }
}

static const char *kind_name(const dls_sim_op *op)
{
    switch (op->kind) {
    case SIM_OP_KERNEL:
        return "kernel";
    case SIM_OP_COPY:
        return "copy";
    case SIM_OP_SET8:
    case SIM_OP_SET32:
        return "set";
    case SIM_OP_HOSTFN:
        return "hostfn";
    case SIM_OP_EXT_WAIT:
        return "wait";
    default:
        return op->role == SIM_ROLE_RECORD ? "record" : op->role == SIM_ROLE_WAIT ? "wait" : "mark";
    }
}

static void append_range(char tag, const void *addr, size_t len)
{
    if (len)
        append(" %c:0x%llx:%zu", tag, (unsigned long long)(uintptr_t)addr, len);
}

static unsigned long long g_next_op; /* scheduler lock */

void dls_sim_trace_op_locked(dls_sim_op *op, const struct CUstream_st *s)
{
    op->id = ++g_next_op;
    if (line_begin() != 0)
        return;
    append("O %llu %u %llu %llu %s", op->id, t_call, s->id, (unsigned long long)op->seq, kind_name(op));
    switch (op->kind) {
    case SIM_OP_COPY:
        append_range('r', op->u.copy.src, op->u.copy.n);
        append_range('w', op->u.copy.dst, op->u.copy.n);
        break;
    case SIM_OP_SET8:
        append_range('w', op->u.set.dst, op->u.set.n);
        break;
    case SIM_OP_SET32:
        append_range('w', op->u.set.dst, op->u.set.n * 4);
        break;
    case SIM_OP_KERNEL:
        for (unsigned i = 0; i < op->nacc; i++)
            append_range('m', (const void *)op->acc[i].addr, op->acc[i].len);
        break;
    default:
        break;
    }
    line_end();
    if (op->role == SIM_ROLE_RECORD)
        dls_sim_trace_line("E %llu %llu", op->id, op->u.wait.e->id);
    else if (op->role == SIM_ROLE_WAIT)
        dls_sim_trace_line("W %llu %llu", op->id, op->u.wait.e->id);
    if (op->gexec)
        dls_sim_trace_line("G %llu %llu %u", op->id, op->gexec, op->gnode);
}

/* A forked child gets a fresh stamp sequence in its own file (%p), or writes nothing. */
static void trace_prepare(void)
{
    pthread_mutex_lock(&g_trace_lock);
}
static void trace_parent(void)
{
    pthread_mutex_unlock(&g_trace_lock);
}
static void trace_child(void)
{
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
    g_stamp = 0;
    if (!strstr(g_path, "%p"))
        g_broken = 1;
    pthread_mutex_unlock(&g_trace_lock);
}

__attribute__((constructor)) static void trace_init(void)
{
    const char *path = getenv("CUDASIM_TRACE");
    if (!path || !*path || !(g_path = strdup(path)))
        return;
    pthread_atfork(trace_prepare, trace_parent, trace_child);
    atomic_store(&dls_sim_trace_enabled, 1);
}
