/* Watched pages (check): the pages of host-visible tensors whose producer's writes are pending,
 * protected from the CPU (PROT_NONE: a pending write conflicts with host reads and writes alike)
 * so that the host's access itself is seen. A GPU writes page-locked memory by DMA, not through
 * the CPU's page tables, so the producer's work still lands.
 *
 * The first access to a watched range faults: the SIGSEGV handler records the access (address,
 * load or store, the thread, its native stack), gives the pages back to the CPU and lets the
 * access run again; the policy reports it later, under its lock (dls_pol_pages_fault_of). A fault
 * on no watched page goes to the handler the program installed before dlsync's, or, when that
 * was SIG_DFL or SIG_IGN, to the default action (re-raised when the signal was sent, not a
 * fault). The handler is async-signal-safe: it allocates nothing and takes no lock (slots are
 * atomics; the stack capture is warmed up before the first protection: stack.h); the policy lock
 * is never needed in it, as dlsync itself never touches a tensor's data. A handler the program
 * installs after dlsync's is found at the next protection, which puts dlsync's back in front of
 * it; until then a fault on a watched page reaches the program's handler.
 *
 * Every function but the handler runs with dls_pol_g.lock held. */
#ifndef DLS_POL_PAGES_H
#define DLS_POL_PAGES_H

#include "../report/stack.h"
#include "types.h"

#include <stdint.h>
#include <sys/types.h>

#define DLS_POL_WATCHED 64 /* ranges watched at once */

/* A host access caught on watched pages. */
typedef struct {
    uintptr_t addr; /* the address it touched */
    int store;      /* 1: a store, 0: a load (or not known) */
    pid_t tid;      /* the thread that made it */
    dls_stack stack;
} dls_pol_fault;

/* The page size. */
uintptr_t dls_pol_pages_size(void) DLS_REQUIRES(dls_pol_g.lock);

/* Protects the pages [lo, hi) (page-aligned) from the CPU. Returns the watch's handle (>= 1), or
 * 0 with *why set to a sentence saying why the pages cannot be watched (every slot in use, pages
 * already watched for another tensor, the handler cannot be installed, mprotect refused). */
int dls_pol_pages_watch(uintptr_t lo, uintptr_t hi, const char **why) DLS_REQUIRES(dls_pol_g.lock);

/* Takes the access caught on watch w since the last call into *out: 1, or 0 when there is none. */
int dls_pol_pages_fault_of(int w, dls_pol_fault *out) DLS_REQUIRES(dls_pol_g.lock);

/* Gives watch w's pages back to the CPU (when no fault did) and ends it; an access caught and
 * not taken yet is stored into *out (returns 1), else returns 0. */
int dls_pol_pages_unwatch(int w, dls_pol_fault *out) DLS_REQUIRES(dls_pol_g.lock);

#endif
