/* dlsync's own descriptors: the log file and the program's stderr, written only while they are
 * still what dlsync found.
 *
 * Programs close and reuse descriptors (daemons close everything from 3 up, or 0-2, then open
 * their data files). The log is opened without blocking (a FIFO without a reader, a directory
 * or a device that cannot be written fail at once instead of stalling the program), moved above
 * the descriptors programs usually use, close-on-exec, and before each write its descriptor is
 * checked (fstat: same device and inode) to still be the file dlsync opened. Stderr is fd 2 as
 * found when the shim started: a write to it happens only while fd 2 is still that file. When a
 * check fails nothing is written. Thread-safe; never allocates. */
#ifndef DLS_OWNFD_H
#define DLS_OWNFD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Lowest descriptor dlsync's own files get (lower when the descriptor limit is lower). */
#define DLS_OWNFD_FLOOR 900

/* A file dlsync opened. fd is -1 when none. */
typedef struct {
    int fd;
    dev_t dev;
    ino_t ino;
    off_t opened_size; /* the file's size when it was opened (0: new or empty) */
    int regular;       /* 1 when it is a regular file */
} dls_ownfd;

/* Records what fd 2 is now (nothing when it is closed): later stderr writes go there only
 * while it is unchanged. Called once by the shim's start-up, before anything is written. */
void dls_ownfd_init_stderr(void);

/* Writes buf[0..len) to fd 2 with one write when fd 2 is still the stderr recorded by
 * dls_ownfd_init_stderr (before that call: when fd 2 is open). Returns 0 when written, -1 when
 * not (fd 2 changed, closed, or the write failed). */
int dls_ownfd_stderr(const char *buf, size_t len);

/* Opens `path` for appending (created 0644 when missing) without blocking and without becoming
 * a controlling terminal, moves it to DLS_OWNFD_FLOOR or above, close-on-exec, and fills *f.
 * Returns 0, or an errno value (EISDIR, ENXIO for a FIFO without reader, EMFILE, ...) with
 * f->fd = -1. */
int dls_ownfd_open_append(const char *path, dls_ownfd *f);

/* dls_ownfd_open_append for a file that must not exist yet (O_EXCL): EEXIST when it does. */
int dls_ownfd_create(const char *path, dls_ownfd *f);

/* Writes buf[0..len) with one write(2) when f->fd still is the file f was opened on and, when
 * `limit` is not 0, the file (a regular one) would not grow past `limit` bytes. Returns 0 when
 * everything was written, ESTALE when the descriptor is no longer that file, EFBIG when the
 * limit holds the record back (nothing written in either case), or the errno of a failed or
 * short write. */
int dls_ownfd_write(const dls_ownfd *f, const char *buf, size_t len, uint64_t limit);

/* Closes f's descriptor when it still is f's file (a descriptor the program reused is left
 * alone) and sets f->fd = -1. */
void dls_ownfd_close(dls_ownfd *f);

#endif
