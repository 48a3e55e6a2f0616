/* DLS_EXPORT marks the few symbols libdlsync.so exports (everything else is hidden by
 * -fvisibility=hidden); each one must also be listed in shim/dlsync.map. */
#ifndef DLS_EXPORT_H
#define DLS_EXPORT_H
#define DLS_EXPORT __attribute__((visibility("default")))
#endif
