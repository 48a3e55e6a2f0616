/* Finding the libdlsync.so that belongs to this dlsync executable. */
#ifndef DLS_TOOL_SHIMPATH_H
#define DLS_TOOL_SHIMPATH_H

#include <stddef.h>

/* Writes the absolute path of libdlsync.so into buf (size n): ../lib/libdlsync.so relative to
 * the directory of the running executable (/proc/self/exe), which holds both in the build tree
 * ($(BUILD)/bin, $(BUILD)/lib) and once installed ($(PREFIX)/bin, $(PREFIX)/lib). Returns 0 when
 * the library exists and is readable; -1 otherwise, with buf holding the path looked for (or
 * empty when the executable's own path is unknown). */
int dls_find_shim(char *buf, size_t n);

#endif
