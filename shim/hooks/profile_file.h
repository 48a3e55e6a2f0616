/* The profile rows read from the file DLSYNC_PROFILES names (the text format of profiles.h, as
 * `dlsync scan` writes it).
 *
 * The file is read once, on first use or by the shim's start-up; each bad line is reported once
 * with its line number and skipped, and so is a row naming a built-in symbol; at most
 * DLS_MAX_FILE_ROWS rows are kept. The rows live for the process. Thread-safe. */
#ifndef DLS_PROFILE_FILE_H
#define DLS_PROFILE_FILE_H

#include "profiles.h"

#include <stddef.h>

#define DLS_MAX_FILE_ROWS 64

/* Reads DLSYNC_PROFILES (once; later calls do nothing). */
void dls_profile_file_read(void);

/* The rows read from DLSYNC_PROFILES (reading it first when that was not done yet); *n gets
 * their number. */
const dls_profile *dls_file_rows(size_t *n);

#endif
