/* x86-64 System V wrapper stubs and the generic trampoline (see trampoline.h). */
#include "trampoline.h"

#include "bindings.h"

#include <stddef.h>

_Static_assert(offsetof(dls_frame, arg) == 128, "frame layout");
_Static_assert(offsetof(dls_frame, rax) == 176, "frame layout");
_Static_assert(offsetof(dls_frame, ret) == 184, "frame layout");
_Static_assert(offsetof(dls_frame, ret_xmm) == 200, "frame layout");
_Static_assert(offsetof(dls_frame, tail) == 232, "frame layout");
_Static_assert(offsetof(dls_frame, index) == 240, "frame layout");
_Static_assert(sizeof(dls_frame) == 256, "frame layout");

#define DLS_STR_(x) #x
#define DLS_STR(x) DLS_STR_(x)

/* One stub: its own address into r11, then the common trampoline. Exactly DLS_STUB_SIZE bytes
 * apart (.p2align 4), so the trampoline turns r11 into the stub index. None is exported: the
 * binding engine hands their addresses to callers (GOT slots, dlsym results). */
#define DLS_STUB_BODY        \
    ".cfi_startproc\n"       \
    "1: endbr64\n"           \
    "lea 1b(%rip), %r11\n"   \
    "jmp dls_tramp_common\n" \
    ".cfi_endproc\n"

__asm__(".text\n"
        ".p2align 4\n"
        ".globl dls_stubs\n"
        ".hidden dls_stubs\n"
        "dls_stubs:\n"
        ".rept " DLS_STR(DLS_STUB_COUNT) "\n"
                                         ".p2align 4\n" DLS_STUB_BODY ".endr\n"
                                         ".p2align 4\n");

/* The common trampoline. rbx holds the real function, r12 the frame, rbp the frame base. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl dls_tramp_common\n"
        ".hidden dls_tramp_common\n"
        ".type dls_tramp_common, @function\n"
        "dls_tramp_common:\n"
        ".cfi_startproc\n"
        ".cfi_personality 0x9b, DW.ref.dls_tramp_personality\n"
        "push %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "mov %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "push %rbx\n"
        ".cfi_offset %rbx, -24\n"
        "push %r12\n"
        ".cfi_offset %r12, -32\n"
        "sub $256, %rsp\n"
        "mov %rsp, %r12\n"
        "movdqu %xmm0, 0(%r12)\n"
        "movdqu %xmm1, 16(%r12)\n"
        "movdqu %xmm2, 32(%r12)\n"
        "movdqu %xmm3, 48(%r12)\n"
        "movdqu %xmm4, 64(%r12)\n"
        "movdqu %xmm5, 80(%r12)\n"
        "movdqu %xmm6, 96(%r12)\n"
        "movdqu %xmm7, 112(%r12)\n"
        "mov %rdi, 128(%r12)\n"
        "mov %rsi, 136(%r12)\n"
        "mov %rdx, 144(%r12)\n"
        "mov %rcx, 152(%r12)\n"
        "mov %r8, 160(%r12)\n"
        "mov %r9, 168(%r12)\n"
        "mov %rax, 176(%r12)\n"
        "lea dls_stubs(%rip), %rax\n"
        "sub %rax, %r11\n"
        "shr $4, %r11\n"
        "mov %r11, 240(%r12)\n"
        "movq $0, 232(%r12)\n"
        "movq $0, 248(%r12)\n"
        "mov %r12, %rdi\n"
        "call dls_hook_pre\n"
        "mov %rax, %rbx\n"
        "movdqu 0(%r12), %xmm0\n"
        "movdqu 16(%r12), %xmm1\n"
        "movdqu 32(%r12), %xmm2\n"
        "movdqu 48(%r12), %xmm3\n"
        "movdqu 64(%r12), %xmm4\n"
        "movdqu 80(%r12), %xmm5\n"
        "movdqu 96(%r12), %xmm6\n"
        "movdqu 112(%r12), %xmm7\n"
        "mov 128(%r12), %rdi\n"
        "mov 136(%r12), %rsi\n"
        "mov 144(%r12), %rdx\n"
        "mov 152(%r12), %rcx\n"
        "mov 160(%r12), %r8\n"
        "mov 168(%r12), %r9\n"
        "mov 176(%r12), %rax\n"
        "test %rbx, %rbx\n"
        "jz 2f\n"
        "cmpq $0, 232(%r12)\n"
        "jne 4f\n"
        "call *%rbx\n"
        "mov %rax, 184(%r12)\n"
        "mov %rdx, 192(%r12)\n"
        "movdqu %xmm0, 200(%r12)\n"
        "movdqu %xmm1, 216(%r12)\n"
        "jmp 3f\n"
        "2:\n"
        "xor %eax, %eax\n"
        "mov %rax, 184(%r12)\n"
        "mov %rax, 192(%r12)\n"
        "pxor %xmm0, %xmm0\n"
        "movdqu %xmm0, 200(%r12)\n"
        "movdqu %xmm0, 216(%r12)\n"
        "3:\n"
        "mov %r12, %rdi\n"
        "call dls_hook_post\n"
        "mov 184(%r12), %rax\n"
        "mov 192(%r12), %rdx\n"
        "movdqu 200(%r12), %xmm0\n"
        "movdqu 216(%r12), %xmm1\n"
        ".cfi_remember_state\n"
        "lea -16(%rbp), %rsp\n"
        "pop %r12\n"
        "pop %rbx\n"
        "pop %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".cfi_restore_state\n"
        "4:\n"
        "mov %rbx, %r11\n"
        "lea -16(%rbp), %rsp\n"
        "pop %r12\n"
        "pop %rbx\n"
        "pop %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "jmp *%r11\n"
        ".cfi_endproc\n"
        ".size dls_tramp_common, .-dls_tramp_common\n"
        /* The personality pointer, as compilers emit it for PIC code. */
        ".hidden DW.ref.dls_tramp_personality\n"
        ".weak DW.ref.dls_tramp_personality\n"
        ".section .data.rel.local.DW.ref.dls_tramp_personality,\"awG\",@progbits,"
        "DW.ref.dls_tramp_personality,comdat\n"
        ".p2align 3\n"
        ".type DW.ref.dls_tramp_personality, @object\n"
        ".size DW.ref.dls_tramp_personality, 8\n"
        "DW.ref.dls_tramp_personality:\n"
        ".quad dls_tramp_personality\n"
        ".text\n");
