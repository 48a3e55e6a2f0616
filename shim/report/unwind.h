/* A cheap walk of the calling thread's native stack, for check's stacks (stack.h): return
 * addresses only, each frame stepped with its unwind rule (where the frame's caller's stack
 * pointer, return address and frame pointer are) from the object's .eh_frame, kept per thread by
 * return address, so a stack seen before is walked without parsing anything; the first sight of
 * an address finds its frame description through libgcc_s's _Unwind_Find_FDE (the library that
 * backtrace(3) loads, opened at the first walk; without it the walk declines).
 *
 * Safe by construction: a frame is stepped only when its rule is one this walk knows (the
 * canonical frame address is the stack or frame pointer plus an offset, or the value saved at
 * the frame pointer plus an offset, as a stack realigned at entry has; the return address and the
 * frame pointer saved at offsets), and every read lies inside the thread's stack, 8-aligned, each
 * frame above the last: a chain that leaves the stack ends the walk, never faults. x86-64 only;
 * elsewhere, or when the thread's stack bounds or the first frame's rule are unknown (a stack of
 * its own, sigaltstack), the walk reports that it cannot, and the caller falls back to
 * backtrace(3). The rules are forgotten when an object is unloaded: at once when the shim's
 * dlclose tells it, within 64 walks of the thread when the loader's count says so. Thread-safe;
 * allocates one
 * block per thread at its first walk (thread_block.h). */
#ifndef DLS_UNWIND_H
#define DLS_UNWIND_H

#include "../common/compiler.h"

/* Writes the return addresses of the calling thread's stack into pc, innermost first (pc[0]:
 * where dls_unwind's caller resumes), at most max of them; returns how many, or -1 when the walk
 * cannot start (the caller falls back to backtrace). Stops early at a frame whose rule it does
 * not know or whose reads leave the stack. */
int dls_unwind(void **pc, int max) DLS_UNLOCKED;

/* Tells every thread's walker that an object may have been unloaded (its addresses may come to
 * hold another object's code): each forgets its rules at its next walk. Thread-safe, lock-free. */
void dls_unwind_unloaded(void);

/* Tests only: how many rules the calling thread's walker has found in the unwind tables (a
 * stack seen before is walked from the rules kept, finding none). */
unsigned long dls_unwind_rules_found_for_tests(void);

#endif
