/* The programs a process starts, and whether dlsync follows it into them.
 *
 * The shim exports the C library's exec and spawn calls (execve, execv, execvp, execvpe, execl,
 * execlp, execle, posix_spawn, posix_spawnp). Each passes its call on unchanged, first asking
 * whether the program it starts will load libdlsync.so and tell the run about itself: not when
 * it is statically linked, set-user-ID or set-group-ID or has file capabilities (the loader then
 * ignores LD_PRELOAD), when the environment it gets has no LD_PRELOAD naming libdlsync.so, or
 * no DLSYNC_RUN_MANIFEST. Then, in a process of a `dlsync run`, one `exec` line goes to the
 * run's manifest (report/run.h: `path`, `why`, and `spawn` for a new process), so the run says
 * that program was not checked. This works in a vfork or posix_spawn child (nothing allocates,
 * no lock is taken). Calls the C library makes inside itself (system, popen) are not seen; the
 * shell they start is a process of its own. */
#ifndef DLS_STARTUP_FOLLOW_H
#define DLS_STARTUP_FOLLOW_H

/* Finds the C library's functions the exports call (call once, from the shim's constructor,
 * in every mode: the exports pass calls on even in an inert copy). */
void dls_follow_init(void);

#endif
