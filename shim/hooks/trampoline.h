/* The wrapper stubs and the generic x86-64 trampoline they jump to.
 *
 * Each wrapped (profile row, real function) pair is bound to a binding index i and reached
 * through a 16-byte stub (endbr64; mov $i, %r11d; jmp trampoline). The trampoline works for any
 * signature of the profile rows without knowing its C or C++ types, relying on the x86-64
 * System V ABI:
 *   - arguments travel in rdi, rsi, rdx, rcx, r8, r9 and xmm0-7, plus al (vector-register count
 *     for variadic calls); none of the wrapped signatures passes arguments on the stack (the
 *     trampoline moves the stack, so stack arguments would be lost: such rows are refused by
 *     the profile parser, which only accepts register indices 0..5);
 *   - results come back in rax/rdx and xmm0/xmm1; a class returned by value (at::Tensor) is
 *     written through a hidden pointer passed in rdi, which the callee also returns in rax;
 *   - rbx, rbp, r12-r15 are callee-saved; the stack is 16-byte aligned at each call;
 *   - the trampoline has DWARF unwind information, so a C++ exception thrown by the real
 *     function unwinds through it; its personality routine (dls_tramp_personality) resets the
 *     wrapper's per-thread state on the way.
 * The trampoline saves the argument registers into a dls_frame, calls dls_hook_pre (which
 * returns the real function, or NULL when it cannot be found), restores them and calls the real
 * function, saves rax/rdx/xmm0/xmm1, calls dls_hook_post, restores them and returns. When the
 * pre-hook sets `tail`, the trampoline instead restores everything and jumps to the real
 * function (no post-hook: used when tracing is off and for nested calls). When the real
 * function is missing, the post-hook sees zeroed results and the caller gets zero.
 * It comes in two forms, each with its own block of stubs: the vector form does all of the
 * above; the scalar form leaves xmm0-7 alone (the hooks are C and may change them), for a row
 * whose function passes no argument and no result in a vector register (dls_profile's
 * `scalar`: every built-in row, whose signatures are known; a DLSYNC_PROFILES row is not, so it
 * gets the vector form). The scalar form saves 20 vector moves per call, which the budget of
 * bench_hooks (make bench) needs.
 * The code is x86_64/trampoline.S; this header is read by it too (the constants below), so its C
 * part is hidden from the assembler.
 * aarch64 would need the same shape with its own registers: x0-x7 and v0-v7 for arguments, x8
 * as the indirect-result register (the hidden return slot is not an argument there, so "arg:N"
 * indices would not count it), results in x0/x1 and v0-v3, x16/x17 as the scratch register for
 * the stub, BTI landing pads instead of endbr64, and its own CFI. */
#ifndef DLS_TRAMPOLINE_H
#define DLS_TRAMPOLINE_H

#define DLS_STUB_SIZE 16   /* bytes per stub */
#define DLS_STUB_COUNT 256 /* stubs per block: one per binding (bindings.h) */

/* Offsets in dls_frame, for the assembly. */
#define DLS_FRAME_XMM 0
#define DLS_FRAME_ARG 128
#define DLS_FRAME_RAX 176
#define DLS_FRAME_RET 184
#define DLS_FRAME_RET_XMM 200
#define DLS_FRAME_TAIL 232
#define DLS_FRAME_INDEX 240
#define DLS_FRAME_STATE 248
#define DLS_FRAME_SIZE 256

#ifndef __ASSEMBLER__

#include "../common/export.h"

#include <stddef.h>
#include <stdint.h>

/* Register state of one wrapped call (layout fixed: the assembly uses the offsets above). */
typedef struct {
    uint8_t xmm[8][16];     /* xmm0-7 at entry */
    uint64_t arg[6];        /* rdi, rsi, rdx, rcx, r8, r9 at entry */
    uint64_t rax;           /* rax at entry */
    uint64_t ret[2];        /* rax, rdx returned by the real function */
    uint8_t ret_xmm[2][16]; /* xmm0, xmm1 returned by the real function */
    uint64_t tail;          /* set by the pre-hook: jump to the real function, no post-hook */
    uint64_t index;         /* stub index (set by the trampoline) */
    uint64_t state;         /* the hooks' own word, 0 on entry */
} dls_frame;

_Static_assert(offsetof(dls_frame, xmm) == DLS_FRAME_XMM, "frame layout");
_Static_assert(offsetof(dls_frame, arg) == DLS_FRAME_ARG, "frame layout");
_Static_assert(offsetof(dls_frame, rax) == DLS_FRAME_RAX, "frame layout");
_Static_assert(offsetof(dls_frame, ret) == DLS_FRAME_RET, "frame layout");
_Static_assert(offsetof(dls_frame, ret_xmm) == DLS_FRAME_RET_XMM, "frame layout");
_Static_assert(offsetof(dls_frame, tail) == DLS_FRAME_TAIL, "frame layout");
_Static_assert(offsetof(dls_frame, index) == DLS_FRAME_INDEX, "frame layout");
_Static_assert(offsetof(dls_frame, state) == DLS_FRAME_STATE, "frame layout");
_Static_assert(sizeof(dls_frame) == DLS_FRAME_SIZE, "frame layout");

/* Starts of the two stub blocks (DLS_STUB_COUNT stubs each): stub i of the vector form is at
 * dls_stubs + i * DLS_STUB_SIZE, that of the scalar form at dls_stubs_scalar + i *
 * DLS_STUB_SIZE; both use binding i. */
extern const char dls_stubs[] DLS_HIDDEN;
extern const char dls_stubs_scalar[] DLS_HIDDEN;

/* Called by the trampoline before the real function; returns it (NULL: not found). */
void *dls_hook_pre(dls_frame *f) DLS_HIDDEN;

/* Called by the trampoline after the real function returned (not after a tail jump). */
void dls_hook_post(dls_frame *f) DLS_HIDDEN;

#endif
#endif
