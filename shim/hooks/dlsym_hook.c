/* The exported dlsym and its C part (see dlsym_hook.h). */
#include "dlsym_hook.h"

#include "../common/config.h"
#include "bindings.h"
#include "resolve.h"

__asm__(".text\n"
        ".p2align 4\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        ".cfi_startproc\n"
        "endbr64\n"
        "cmp $-1, %rdi\n" /* RTLD_NEXT */
        "je 1f\n"
        "cmpb $0, dls_dlsym_ready(%rip)\n"
        "je 1f\n"
        "jmp dls_dlsym_hook\n"
        "1:\n"
        "push %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "push %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "sub $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "call dls_real_dlsym_fn\n"
        "add $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "pop %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "pop %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "test %rax, %rax\n"
        "jz 2f\n"
        "jmp *%rax\n"
        "2:\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");

/* Read by the assembly entry; 0 until dls_dlsym_hook_enable. */
__attribute__((visibility("hidden"))) unsigned char dls_dlsym_ready;

void dls_dlsym_hook_enable(void)
{
    __atomic_store_n(&dls_dlsym_ready, 1, __ATOMIC_RELEASE);
}

void *dls_dlsym_hook(void *handle, const char *name)
{
    void *real = dls_real_dlsym(handle, name);
    if (!real || !name || dls_config_get()->mode == DLS_MODE_OFF)
        return real;
    return dls_binding_wrap(name, real);
}
