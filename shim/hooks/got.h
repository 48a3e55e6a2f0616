/* The GOT slots of a loaded object: finding those bound to a symbol by name, and rewriting one.
 *
 * x86-64 only: the relocations read are RELA entries of type R_X86_64_JUMP_SLOT (the PLT's
 * slots, bound lazily or at load) and R_X86_64_GLOB_DAT (function addresses taken through the
 * GOT, and calls compiled with -fno-plt). Both hold the absolute address of the symbol, so
 * writing another function's address there redirects the object's calls. aarch64 would read
 * R_AARCH64_JUMP_SLOT and R_AARCH64_GLOB_DAT the same way (docs/architecture.md). Nothing here
 * calls the dynamic loader; the caller keeps the object loaded while its memory is read. */
#ifndef DLS_GOT_H
#define DLS_GOT_H

#include <stdint.h>

/* Called for each JUMP_SLOT or GLOB_DAT relocation: slot address and symbol name. */
typedef void (*dls_got_visit_fn)(void **slot, const char *name, void *arg);

/* Visits the relocations of the object loaded at bias `base` whose dynamic section is `dyn`.
 * Returns the number visited. */
unsigned dls_got_each(uintptr_t base, const void *dyn, dls_got_visit_fn fn, void *arg);

/* Stores value into *slot. A slot inside [relro_lo, relro_hi) (the object's PT_GNU_RELRO range,
 * read-only once the object is relocated) is made writable for the store and read-only again.
 * Writes are serialized (two writers never race on one RELRO page's protection). Returns 0, or
 * -1 when the page could not be made writable (the slot is then unchanged). */
int dls_got_write(void **slot, void *value, uintptr_t relro_lo, uintptr_t relro_hi);

#endif
