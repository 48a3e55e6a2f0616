/* DLS_EXPORT marks the few symbols libdlsync.so exports (everything else is hidden by
 * -fvisibility=hidden); each one must also be listed in shim/dlsync.map. */
#ifndef DLS_EXPORT_H
#define DLS_EXPORT_H
#define DLS_EXPORT __attribute__((visibility("default")))
/* DLS_HIDDEN marks a declaration of a shim variable that other files read inline: hidden, it is
 * addressed directly (one load) instead of through the GOT, which -fvisibility=hidden alone
 * does not do for declarations. */
#define DLS_HIDDEN __attribute__((visibility("hidden")))
#endif
