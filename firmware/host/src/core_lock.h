/* core_lock.h - the host's stand-in for lwIP's tcpip core lock (see esp-idf-compat/README.md). */
#ifndef CORE_LOCK_H
#define CORE_LOCK_H

#include <stdbool.h>

/** Takes the lock; aborts with a message when it is already held (it is not recursive). */
void host_core_lock(void);

/** Releases the lock; aborts when it is not held. */
void host_core_unlock(void);

/** Whether the lock is held. */
bool host_core_locked(void);

#endif /* CORE_LOCK_H */
