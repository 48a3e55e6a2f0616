/* The words for a file's type, for the commands' refusals ("refused: a directory"). */
#ifndef DLT_FILEKIND_H
#define DLT_FILEKIND_H

#include <sys/types.h>

/* "a regular file", "a directory", "a FIFO", "a character device", "a block device",
 * "a socket" or "a symbolic link" for the type in st_mode m. */
const char *dlt_file_kind(mode_t m);

#endif
