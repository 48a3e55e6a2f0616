/* DLS_EXPORT marks the few symbols libdlsync.so exports (everything else is hidden by
 * -fvisibility=hidden); each one must also be listed in shim/dlsync.map. */
#ifndef DLS_EXPORT_H
#define DLS_EXPORT_H
#define DLS_EXPORT __attribute__((visibility("default")))
/* DLS_HIDDEN ends every extern declaration of a shim (dls_) name, one rule with no judgment call:
 * -fvisibility=hidden hides definitions, not declarations, so a file that reads another file's
 * variable would go through the GOT unless the linker relaxes the load. `make
 * check-architecture` fails on an extern dls_ declaration without it. */
#define DLS_HIDDEN __attribute__((visibility("hidden")))
#endif
