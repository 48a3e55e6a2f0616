/* The loaded objects (see objects.h). */
#include "objects.h"

#include "caller.h"

#include <stdlib.h>
#include <string.h>

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    dls_object_list *l = arg;
    l->adds = info->dlpi_adds;
    l->subs = info->dlpi_subs;
    if (l->skip && info->dlpi_addr == l->skip)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        dls_object *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return 1;
        l->v = v;
        l->cap = cap;
    }
    char *name = strdup(info->dlpi_name ? info->dlpi_name : "");
    if (!name)
        return 1;
    l->v[l->n++] = (dls_object){info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, name};
    return 0;
}

int dls_objects_list(dls_object_list *l, uintptr_t skip)
{
    *l = (dls_object_list){.skip = skip};
    return dl_iterate_phdr(collect, l) == 0 ? 0 : -1;
}

int dls_objects_list_as(dls_object_list *l, uintptr_t skip, const void *gadget)
{
    *l = (dls_object_list){.skip = skip};
    return (int)(intptr_t)dls_call_as(gadget, (void *)dl_iterate_phdr, (uintptr_t)collect, (uintptr_t)l, 0, 0) == 0
               ? 0
               : -1;
}

void dls_objects_free(dls_object_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    *l = (dls_object_list){0};
}
