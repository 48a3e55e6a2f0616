/* Watched pages and the SIGSEGV handler (see pages.h). */
#include "pages.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

/* A slot's life: FREE -> ARMED (pages protected) -> FAULTING (the handler records an access) ->
 * CAUGHT (pages unprotected, the access waits to be taken) -> TAKEN (reported; pages stay
 * unprotected) -> ENDING (being unwatched) -> FREE. A FREE slot keeps its last range, so that an
 * access which faulted just before its unwatch is let run again rather than passed on. */
enum { FREE, ARMED, FAULTING, CAUGHT, TAKEN, ENDING };

typedef struct {
    _Atomic int state;
    _Atomic uintptr_t lo, hi;
    dls_pol_fault fault; /* written by the handler in FAULTING, read under the lock once CAUGHT */
} slot;

static slot g_slots[DLS_POL_WATCHED];
static struct sigaction g_prev[2]; /* the program's handler: g_prev[g_prev_at] */
static _Atomic int g_prev_at;
static __thread uintptr_t t_retried __attribute__((tls_model("local-dynamic"))); /* an access let run again */

uintptr_t dls_pol_pages_size(void)
{
    static uintptr_t page;
    if (!page)
        page = (uintptr_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* Waits while slot s is in a passing state (the handler or an unwatch is changing its pages). */
static void settle(slot *s)
{
    int st;
    while ((st = atomic_load_explicit(&s->state, memory_order_acquire)) == FAULTING || st == ENDING)
        ;
}

/* Passes the signal on to the program's handler, or to the default action. */
static void pass_on(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *p = &g_prev[atomic_load_explicit(&g_prev_at, memory_order_acquire)];
    if (p->sa_flags & SA_SIGINFO) {
        p->sa_sigaction(sig, si, uc);
        return;
    }
    if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    /* A fault cannot be ignored: the default action ends the process, as it would have without
     * dlsync. A fault runs its instruction again; a sent signal is sent again (blocked in this
     * handler, so delivered once it returns). */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0)
        raise(sig);
}

/* 1 when the faulting access of context uc was a store (x86-64: bit 1 of the page-fault error). */
static int was_store(const void *uc)
{
    return (((const ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
}

/* Captures the stack of the access that faulted in context uc: from its instruction outwards,
 * without the handler's frames and the signal trampoline. */
static void capture_access(dls_stack *s, const void *uc)
{
    dls_stack_capture_native(s);
    void *pc = (void *)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    for (int i = 0; i < s->n; i++)
        if (s->pc[i] == pc) {
            memmove(s->pc, s->pc + i, (size_t)(s->n - i) * sizeof *s->pc);
            s->n -= i;
            return;
        }
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    uintptr_t a = (uintptr_t)si->si_addr;
    int handled = 0;
    for (unsigned i = 0; si->si_code == SEGV_ACCERR && i < DLS_POL_WATCHED && !handled; i++) {
        slot *s = &g_slots[i];
        int st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (a < atomic_load_explicit(&s->lo, memory_order_relaxed) ||
            a >= atomic_load_explicit(&s->hi, memory_order_relaxed))
            continue;
        if (st == ARMED && atomic_compare_exchange_strong(&s->state, &st, FAULTING)) {
            s->fault.addr = a;
            s->fault.store = was_store(uc);
            s->fault.tid = (pid_t)syscall(SYS_gettid);
            capture_access(&s->fault.stack, uc);
            uintptr_t lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
            mprotect((void *)lo, atomic_load_explicit(&s->hi, memory_order_relaxed) - lo, PROT_READ | PROT_WRITE);
            atomic_store_explicit(&s->state, CAUGHT, memory_order_release);
            handled = 1;
        } else if (t_retried != a) { /* another thread caught it, or it was unwatched meanwhile */
            settle(s);
            t_retried = a;
            handled = 1;
        }
    }
    if (handled) {
        errno = saved;
        return;
    }
    t_retried = 0;
    pass_on(sig, si, uc);
    errno = saved;
}

/* Puts dlsync's handler in front of the program's (installed before or since). 0, or -1. */
static int install(void)
{
    struct sigaction cur;
    if (sigaction(SIGSEGV, NULL, &cur))
        return -1;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault)
        return 0;
    dls_stack warm; /* the first capture may allocate (it loads the unwinder): not in the handler */
    dls_stack_capture_native(&warm);
    int next = !atomic_load_explicit(&g_prev_at, memory_order_relaxed);
    g_prev[next] = cur;
    atomic_store_explicit(&g_prev_at, next, memory_order_release);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGSEGV, &sa, NULL);
}

/* 1 when slot s (not FREE) covers a page of [lo, hi). */
static int overlaps(const slot *s, uintptr_t lo, uintptr_t hi)
{
    return atomic_load_explicit(&s->lo, memory_order_relaxed) < hi &&
           lo < atomic_load_explicit(&s->hi, memory_order_relaxed);
}

int dls_pol_pages_watch(uintptr_t lo, uintptr_t hi, const char **why)
{
    slot *free_slot = NULL;
    for (unsigned i = 0; i < DLS_POL_WATCHED; i++) {
        slot *s = &g_slots[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != FREE) {
            if (overlaps(s, lo, hi)) {
                *why = "its pages are protected for another exchanged tensor already";
                return 0;
            }
        } else if (!free_slot) {
            free_slot = s;
        }
    }
    if (!free_slot) {
        *why = "64 host-visible tensors are protected already";
        return 0;
    }
    if (install()) {
        *why = "the SIGSEGV handler that catches host accesses cannot be installed";
        return 0;
    }
    atomic_store_explicit(&free_slot->lo, lo, memory_order_relaxed);
    atomic_store_explicit(&free_slot->hi, hi, memory_order_relaxed);
    atomic_store_explicit(&free_slot->state, ARMED, memory_order_release);
    if (mprotect((void *)lo, hi - lo, PROT_NONE)) {
        *why = errno == ENOMEM ? "mprotect refused its pages (not mapped, or too many mappings)"
                               : "mprotect refused its pages (a mapping that cannot be protected)";
        atomic_store_explicit(&free_slot->state, FREE, memory_order_release);
        return 0;
    }
    return (int)(free_slot - g_slots) + 1;
}

int dls_pol_pages_fault_of(int w, dls_pol_fault *out)
{
    slot *s = &g_slots[w - 1];
    settle(s);
    int st = CAUGHT;
    if (!atomic_compare_exchange_strong(&s->state, &st, TAKEN))
        return 0;
    *out = s->fault;
    return 1;
}

int dls_pol_pages_unwatch(int w, dls_pol_fault *out)
{
    slot *s = &g_slots[w - 1];
    int st;
    do {
        settle(s);
        st = atomic_load_explicit(&s->state, memory_order_acquire);
    } while (!atomic_compare_exchange_strong(&s->state, &st, ENDING));
    uintptr_t lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
    if (st == ARMED)
        mprotect((void *)lo, atomic_load_explicit(&s->hi, memory_order_relaxed) - lo, PROT_READ | PROT_WRITE);
    else if (st == CAUGHT)
        *out = s->fault;
    atomic_store_explicit(&s->state, FREE, memory_order_release);
    return st == CAUGHT;
}
