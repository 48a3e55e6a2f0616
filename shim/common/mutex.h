/* The shim's mutex: a pthread_mutex_t that clang's thread-safety analysis knows as a lock
 * (compiler.h), with the calls that take and release it. Declare a lock as dls_mutex, initialize it
 * with PTHREAD_MUTEX_INITIALIZER, and take it with dls_mutex_lock: the analysis then checks the
 * functions that say they need it (DLS_REQUIRES) and the calls that must not run under any lock
 * of the shim (DLS_UNLOCKED). The same object as a pthread_mutex_t: pthread calls take it too,
 * unchecked. */
#ifndef DLS_MUTEX_H
#define DLS_MUTEX_H

#include "compiler.h"

#include <pthread.h>

typedef pthread_mutex_t dls_mutex DLS_CAPABILITY("mutex");

/* Takes m (and so dls_any_lock). */
static inline void dls_mutex_lock(dls_mutex *m) DLS_ACQUIRE(*m, dls_any_lock) DLS_NO_LOCK_ANALYSIS
{
    pthread_mutex_lock(m);
}

/* Takes m when it is free: 1 when taken, 0 when another thread holds it. */
static inline int dls_mutex_trylock(dls_mutex *m) DLS_TRY_ACQUIRE(1, *m, dls_any_lock) DLS_NO_LOCK_ANALYSIS
{
    return pthread_mutex_trylock(m) == 0;
}

/* Releases m, taken by the calling thread. */
static inline void dls_mutex_unlock(dls_mutex *m) DLS_RELEASE(*m, dls_any_lock) DLS_NO_LOCK_ANALYSIS
{
    pthread_mutex_unlock(m);
}

#endif
