/* Itanium C++ demangling through the C++ runtime's __cxa_demangle, found at run time. */
#ifndef DLT_DEMANGLE_H
#define DLT_DEMANGLE_H

/* 1 when a C++ runtime with __cxa_demangle could be loaded (looked up once, thread-safe); 0
 * when there is none, and C++ names stay mangled. */
int dlt_demangle_available(void);

/* Returns a malloc'd demangled form of name, or a malloc'd copy of name when it is not a
 * mangled C++ name (C symbols) or no C++ runtime is found; NULL only when memory runs out. */
char *dlt_demangle(const char *name);

#endif
