/* A provider's hook: the row a provider of hooks (the capsule layer, the GIL hooks, the loader
 * hooks) hands the binding engine (engine.h). The type alone, so that a provider below the engine
 * names its rows without including the engine. */
#ifndef DLS_ENGINE_HOOK_H
#define DLS_ENGINE_HOOK_H

/* A function dlsync hooks through the engine without the trampoline (its own C or assembly
 * entry). */
typedef struct {
    const char *name; /* the symbol callers refer to */
    void *entry;      /* what their GOT slots get, unless entry_for is set */
    /* The entry standing for the real function `real` (a hook with one entry per defining object,
     * such as one libpython per dlmopen namespace), or NULL to decline it (the slot is left as it
     * is). Called outside locks. */
    void *(*entry_for)(void *real);
    int by_dlsym;            /* 1: dlsym of `name` returns the entry too */
    int base_namespace_only; /* 1: not bound in a dlmopen namespace (the dlvsym hook) */
    int skip_definer;        /* 1: the slots of the object defining the function are left (its own calls) */
} dls_engine_hook;

#endif
