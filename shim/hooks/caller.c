/* Calls made on behalf of another object (see caller.h); dls_call_as is x86_64/call_as.S. */
#include "caller.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

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
