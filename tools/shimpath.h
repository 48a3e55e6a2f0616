/* Finding the libdlsync.so that belongs to this dlsync executable. */
#ifndef DLT_SHIMPATH_H
#define DLT_SHIMPATH_H

#include <stddef.h>

/* Writes the absolute path of libdlsync.so into buf (size n): ../lib/libdlsync.so relative to
 * the directory of the running executable (/proc/self/exe), which holds both in the build tree
 * ($(BUILD)/bin, $(BUILD)/lib) and once installed ($(PREFIX)/bin, $(PREFIX)/lib). Returns 0 when
 * the library exists and is readable; -1 otherwise, with buf holding the path looked for (or
 * empty when the executable's own path is unknown). */
int dlt_find_shim(char *buf, size_t n);

#endif
