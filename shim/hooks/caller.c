/* Calls made on behalf of another object (see caller.h). */
#include "caller.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

/* rdi = gadget, rsi = fn, rdx..r9 = a..d. The frame keeps rbp; fn is entered with the stack
 * [gadget, continuation] and the usual alignment (rsp + 8 a multiple of 16). */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl dls_call_as\n"
        ".hidden dls_call_as\n"
        ".type dls_call_as, @function\n"
        "dls_call_as:\n"
        ".cfi_startproc\n"
        "endbr64\n"
        "push %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "mov %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "mov %rdi, %rax\n"
        "mov %rsi, %r11\n"
        "mov %rdx, %rdi\n"
        "mov %rcx, %rsi\n"
        "mov %r8, %rdx\n"
        "mov %r9, %rcx\n"
        "test %rax, %rax\n"
        "jz 2f\n"
        "sub $8, %rsp\n"
        "lea 1f(%rip), %r10\n"
        "push %r10\n"
        "push %rax\n"
        "jmp *%r11\n"
        "1:\n"
        ".cfi_remember_state\n"
        "leave\n"
        ".cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".cfi_restore_state\n"
        "2:\n"
        "call *%r11\n"
        "leave\n"
        ".cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size dls_call_as, .-dls_call_as\n");

/* The `ret` of an epilogue "add $8, %rsp; ret" within the first bytes of fn, as crti's _init
 * and _fini end; NULL when there is none. */
static const void *epilogue_ret(const unsigned char *fn)
{
    static const unsigned char tail[] = {0x48, 0x83, 0xc4, 0x08, 0xc3};
    for (size_t i = 0; fn && i + sizeof tail <= 64; i++) {
        size_t k = 0;
        while (k < sizeof tail && fn[i + k] == tail[k])
            k++;
        if (k == sizeof tail)
            return fn + i + sizeof tail - 1;
    }
    return NULL;
}

const void *dls_gadget_of_object(uintptr_t base, const void *dyn)
{
    const unsigned char *fini = NULL, *init = NULL;
    for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
        uintptr_t p = d->d_un.d_ptr;
        if (p && p < base)
            p += base;
        if (d->d_tag == DT_FINI)
            fini = (const unsigned char *)p;
        else if (d->d_tag == DT_INIT)
            init = (const unsigned char *)p;
    }
    const void *g = epilogue_ret(fini);
    return g ? g : epilogue_ret(init);
}

const void *dls_caller_gadget(const void *addr)
{
    Dl_info di;
    struct link_map *map = NULL;
    if (!addr || !dladdr1(addr, &di, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return NULL;
    return dls_gadget_of_object(map->l_addr, map->l_ld);
}
