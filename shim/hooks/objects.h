/* The loaded objects, as dl_iterate_phdr lists them, copied out of the loader's lock.
 *
 * The dl_iterate_phdr callback runs under the loader's lock: it only copies (load bias, program
 * headers, name); every use of the list (dlopen, dlsym, reading the objects) happens after. */
#ifndef DLS_OBJECTS_H
#define DLS_OBJECTS_H

#include "../common/compiler.h"
#include <link.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uintptr_t base;          /* load bias (dlpi_addr) */
    const ElfW(Phdr) * phdr; /* program headers, valid while the object stays loaded */
    ElfW(Half) phnum;
    char *name; /* copied; "" for the main program */
} dls_object;

typedef struct {
    dls_object *v;
    size_t n, cap;
    unsigned long long adds, subs; /* the loader's load and unload counters */
    uintptr_t skip;
} dls_object_list;

/* Lists the loaded objects other than the one at load bias `skip` (0: none skipped) into *l.
 * Returns 0, or -1 when memory ran out (the list then holds what was copied). */
int dls_objects_list(dls_object_list *l, uintptr_t skip) DLS_UNLOCKED;

/* The same for the link-map namespace of the object containing `gadget` (a `ret` instruction of
 * that object, caller.h): dl_iterate_phdr lists its caller's namespace. */
int dls_objects_list_as(dls_object_list *l, uintptr_t skip, const void *gadget) DLS_UNLOCKED;

/* Frees what dls_objects_list allocated. */
void dls_objects_free(dls_object_list *l);

#endif
