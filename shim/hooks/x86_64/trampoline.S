/* x86-64 System V wrapper stubs and the generic trampoline (see ../trampoline.h). */
#include "../trampoline.h"

/* The stubs: two blocks of DLS_STUB_COUNT, one per trampoline. Stub i of either block loads its
 * binding index i into r11 and jumps to its block's trampoline; each stub is exactly
 * DLS_STUB_SIZE bytes (endbr64, mov $i, %r11d and jmp take at most 15; .org refuses a longer
 * one). None is exported: the binding engine hands their addresses to callers (GOT slots, dlsym
 * results). */
.macro DLS_STUB_BLOCK name, entry
	.text
	.p2align 4
	.globl \name
	.hidden \name
\name:
	.set .Lindex, 0
	.rept DLS_STUB_COUNT
	.org \name + .Lindex * DLS_STUB_SIZE, 0xcc
	.cfi_startproc
	endbr64
	mov $.Lindex, %r11d
	jmp \entry
	.cfi_endproc
	.set .Lindex, .Lindex + 1
	.endr
	.org \name + DLS_STUB_COUNT * DLS_STUB_SIZE
.endm

	DLS_STUB_BLOCK dls_stubs, dls_tramp_vectors
	DLS_STUB_BLOCK dls_stubs_scalar, dls_tramp_scalar

/* The trampoline, in two forms: with `vectors` 1 it saves and restores xmm0-7 around the
 * pre-hook and xmm0/xmm1 (the results) around the post-hook; with 0 it leaves them alone, for
 * functions that pass no argument and no result in a vector register. rbx holds the real
 * function, r12 the frame (a dls_frame), rbp the frame base. */
.macro DLS_TRAMPOLINE name, vectors
	.text
	.p2align 4
	.globl \name
	.hidden \name
	.type \name, @function
\name:
	.cfi_startproc
	.cfi_personality 0x9b, DW.ref.dls_tramp_personality
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	push %rbx
	.cfi_offset %rbx, -24
	push %r12
	.cfi_offset %r12, -32
	sub $DLS_FRAME_SIZE, %rsp
	mov %rsp, %r12
	.if \vectors
	movdqu %xmm0, DLS_FRAME_XMM + 0(%r12)
	movdqu %xmm1, DLS_FRAME_XMM + 16(%r12)
	movdqu %xmm2, DLS_FRAME_XMM + 32(%r12)
	movdqu %xmm3, DLS_FRAME_XMM + 48(%r12)
	movdqu %xmm4, DLS_FRAME_XMM + 64(%r12)
	movdqu %xmm5, DLS_FRAME_XMM + 80(%r12)
	movdqu %xmm6, DLS_FRAME_XMM + 96(%r12)
	movdqu %xmm7, DLS_FRAME_XMM + 112(%r12)
	.endif
	mov %rdi, DLS_FRAME_ARG + 0(%r12)
	mov %rsi, DLS_FRAME_ARG + 8(%r12)
	mov %rdx, DLS_FRAME_ARG + 16(%r12)
	mov %rcx, DLS_FRAME_ARG + 24(%r12)
	mov %r8, DLS_FRAME_ARG + 32(%r12)
	mov %r9, DLS_FRAME_ARG + 40(%r12)
	mov %rax, DLS_FRAME_RAX(%r12)
	mov %r11, DLS_FRAME_INDEX(%r12)
	movq $0, DLS_FRAME_TAIL(%r12)
	movq $0, DLS_FRAME_STATE(%r12)
	mov %r12, %rdi
	call dls_hook_pre
	mov %rax, %rbx
	.if \vectors
	movdqu DLS_FRAME_XMM + 0(%r12), %xmm0
	movdqu DLS_FRAME_XMM + 16(%r12), %xmm1
	movdqu DLS_FRAME_XMM + 32(%r12), %xmm2
	movdqu DLS_FRAME_XMM + 48(%r12), %xmm3
	movdqu DLS_FRAME_XMM + 64(%r12), %xmm4
	movdqu DLS_FRAME_XMM + 80(%r12), %xmm5
	movdqu DLS_FRAME_XMM + 96(%r12), %xmm6
	movdqu DLS_FRAME_XMM + 112(%r12), %xmm7
	.endif
	mov DLS_FRAME_ARG + 0(%r12), %rdi
	mov DLS_FRAME_ARG + 8(%r12), %rsi
	mov DLS_FRAME_ARG + 16(%r12), %rdx
	mov DLS_FRAME_ARG + 24(%r12), %rcx
	mov DLS_FRAME_ARG + 32(%r12), %r8
	mov DLS_FRAME_ARG + 40(%r12), %r9
	mov DLS_FRAME_RAX(%r12), %rax
	test %rbx, %rbx
	jz 2f
	cmpq $0, DLS_FRAME_TAIL(%r12)
	jne 4f
	call *%rbx
	mov %rax, DLS_FRAME_RET + 0(%r12)
	mov %rdx, DLS_FRAME_RET + 8(%r12)
	.if \vectors
	movdqu %xmm0, DLS_FRAME_RET_XMM + 0(%r12)
	movdqu %xmm1, DLS_FRAME_RET_XMM + 16(%r12)
	.endif
	jmp 3f
2:	/* no real function: the results are zero */
	xor %eax, %eax
	mov %rax, DLS_FRAME_RET + 0(%r12)
	mov %rax, DLS_FRAME_RET + 8(%r12)
	.if \vectors
	pxor %xmm0, %xmm0
	movdqu %xmm0, DLS_FRAME_RET_XMM + 0(%r12)
	movdqu %xmm0, DLS_FRAME_RET_XMM + 16(%r12)
	.endif
3:
	mov %r12, %rdi
	call dls_hook_post
	mov DLS_FRAME_RET + 0(%r12), %rax
	mov DLS_FRAME_RET + 8(%r12), %rdx
	.if \vectors
	movdqu DLS_FRAME_RET_XMM + 0(%r12), %xmm0
	movdqu DLS_FRAME_RET_XMM + 16(%r12), %xmm1
	.endif
	.cfi_remember_state
	lea -16(%rbp), %rsp
	pop %r12
	pop %rbx
	pop %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_restore_state
4:	/* tail: the real function returns to the caller itself */
	mov %rbx, %r11
	lea -16(%rbp), %rsp
	pop %r12
	pop %rbx
	pop %rbp
	.cfi_def_cfa %rsp, 8
	jmp *%r11
	.cfi_endproc
	.size \name, .-\name
.endm

	DLS_TRAMPOLINE dls_tramp_vectors, 1
	DLS_TRAMPOLINE dls_tramp_scalar, 0

/* The personality pointer, as compilers emit it for PIC code. */
	.hidden DW.ref.dls_tramp_personality
	.weak DW.ref.dls_tramp_personality
	.section .data.rel.local.DW.ref.dls_tramp_personality,"awG",@progbits,DW.ref.dls_tramp_personality,comdat
	.p2align 3
	.type DW.ref.dls_tramp_personality, @object
	.size DW.ref.dls_tramp_personality, 8
DW.ref.dls_tramp_personality:
	.quad dls_tramp_personality

	.section .note.GNU-stack,"",@progbits
