/* dls_call_as: a call made with another object's `ret` as the return address the callee sees
 * (see ../caller.h).
 *
 * rdi = gadget, rsi = fn, rdx..r9 = a..d. The frame keeps rbp; fn is entered with the stack
 * [gadget, continuation] and the usual alignment (rsp + 8 a multiple of 16), so fn returns to the
 * gadget, whose `ret` returns to the continuation. A NULL gadget calls fn normally. */
	.text
	.p2align 4
	.globl dls_call_as
	.hidden dls_call_as
	.type dls_call_as, @function
dls_call_as:
	.cfi_startproc
	endbr64
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	mov %rdi, %rax
	mov %rsi, %r11
	mov %rdx, %rdi
	mov %rcx, %rsi
	mov %r8, %rdx
	mov %r9, %rcx
	test %rax, %rax
	jz 2f
	sub $8, %rsp
	lea 1f(%rip), %r10
	push %r10
	push %rax
	jmp *%r11
1:
	.cfi_remember_state
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_restore_state
2:
	call *%r11
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size dls_call_as, .-dls_call_as

	.section .note.GNU-stack,"",@progbits
