/* Finding the real framework functions behind the shim's wrappers.
 *
 * A wrapped name is first looked up with dlsym(RTLD_NEXT), which sees the objects after the
 * shim in the global scope. Libraries loaded with RTLD_LOCAL (Python extension modules and
 * everything they pull in, such as libtorch_cpu.so) are not in that scope, so the loaded
 * objects are then searched one by one (dl_iterate_phdr, then dlopen(RTLD_NOLOAD) + dlsym on
 * each), skipping the shim itself and the main program. All lookups use the real dlsym and
 * dlopen, never the shim's hooks; no dlsync lock is held. The C API uses it to find producers. */
#ifndef DLS_LOOKUP_H
#define DLS_LOOKUP_H

/* Searches for the definition of `name` outside the shim as described above. Returns its
 * address and sets *lib to the path of the object that defines it (never NULL; "" for the main
 * program), or returns NULL. `*adds` (in/out) holds the loader's object-load counter seen by the
 * last unsuccessful search: when nothing was loaded since, the search is skipped. Start it at 0. */
void *dls_resolve(const char *name, const char **lib, unsigned long long *adds);

#endif
