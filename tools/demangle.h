/* Itanium C++ demangling through the C++ runtime's __cxa_demangle. */
#ifndef DLS_TOOL_DEMANGLE_H
#define DLS_TOOL_DEMANGLE_H

/* Returns a malloc'd demangled form of name, or a malloc'd copy of name when it is not a
 * mangled C++ name (C symbols); NULL only when memory runs out. */
char *dls_demangle(const char *name);

#endif
