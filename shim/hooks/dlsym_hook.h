/* The shim's dlsym: a lookup of a wrapped name by handle returns the wrapper.
 *
 * Programs that find framework functions at run time (ctypes, cffi, JNI, plugin loaders; the
 * Python bindings of MXNet and TVM) call dlsym(handle, name). The exported `dlsym` (assembly
 * entry in dlsym_hook.c) passes RTLD_NEXT lookups straight to the C library's dlsym with a
 * tail jump, so the C library still sees the caller's own return address; every other lookup
 * goes to dls_dlsym_hook, which asks the real dlsym and, when the handle's object really
 * defines a name that has a profile row, returns the wrapper bound to that definition
 * (bindings.h). Until the shim's constructor enables the hook, every lookup goes straight to
 * the C library: sanitizer runtimes call dlsym while they initialize, before any instrumented
 * code may run. dlvsym is not hooked. */
#ifndef DLS_DLSYM_HOOK_H
#define DLS_DLSYM_HOOK_H

/* dlsym for handles other than RTLD_NEXT, as described above. */
void *dls_dlsym_hook(void *handle, const char *name) __attribute__((visibility("hidden")));

/* Turns the hook on (called once by the shim's constructor). */
void dls_dlsym_hook_enable(void);

#endif
