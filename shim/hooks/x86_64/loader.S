/* The assembly entries of the loader hooks (see ../loader.h): dlsym, dlvsym (reached through the
 * callers' GOT slots as dls_dlvsym_entry), dlopen and dlmopen.
 *
 * An entry asks a C test (eax != 0: take the hook) with the argument registers saved, then either
 * jumps to the C hook with the caller's return address as an extra argument, or jumps to the C
 * library's function, which then sees the real caller. The C functions it calls are in
 * ../loader.c and ../resolve.c, none instrumented by a sanitizer. */

/* Saves and restores the four argument registers around a call (the stack stays 16-byte
 * aligned). */
.macro SAVE
	push %rdi
	.cfi_adjust_cfa_offset 8
	push %rsi
	.cfi_adjust_cfa_offset 8
	push %rdx
	.cfi_adjust_cfa_offset 8
	push %rcx
	.cfi_adjust_cfa_offset 8
	sub $8, %rsp
	.cfi_adjust_cfa_offset 8
.endm

.macro RESTORE
	add $8, %rsp
	.cfi_adjust_cfa_offset -8
	pop %rcx
	.cfi_adjust_cfa_offset -8
	pop %rdx
	.cfi_adjust_cfa_offset -8
	pop %rsi
	.cfi_adjust_cfa_offset -8
	pop %rdi
	.cfi_adjust_cfa_offset -8
.endm

/* An entry `name`: `test` decides, given the looked-up name (the second argument) in rdi when
 * `by_name` is 1, nothing otherwise; the hook gets the caller's return address in `ret_reg`;
 * otherwise a tail jump to what `real()` returns (nothing to call: return 0). */
.macro ENTRY name, by_name, test, ret_reg, hook, real
	.text
	.p2align 4
	.type \name, @function
\name:
	.cfi_startproc
	endbr64
	SAVE
	.if \by_name
	mov %rsi, %rdi
	.endif
	call \test
	test %eax, %eax
	jz 1f
	RESTORE
	mov (%rsp), \ret_reg
	jmp \hook
	.cfi_adjust_cfa_offset 40
1:
	call \real
	RESTORE
	test %rax, %rax
	jz 2f
	jmp *%rax
2:
	ret
	.cfi_endproc
	.size \name, .-\name
.endm

	.globl dlsym
	ENTRY dlsym, 1, dls_loader_wants, %rdx, dls_dlsym_hook, dls_real_dlsym_fn
	.globl dls_dlvsym_entry
	.hidden dls_dlvsym_entry
	ENTRY dls_dlvsym_entry, 1, dls_loader_wants, %rcx, dls_dlvsym_hook, dls_real_dlvsym_fn
	.globl dlopen
	ENTRY dlopen, 0, dls_loader_active, %rdx, dls_dlopen_hook, dls_real_dlopen_fn
	.globl dlmopen
	ENTRY dlmopen, 0, dls_loader_active, %rcx, dls_dlmopen_hook, dls_real_dlmopen_fn

	.section .note.GNU-stack,"",@progbits
