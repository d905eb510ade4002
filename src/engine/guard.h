/* guard.h - the SIGBUS guard over the shared file's mapping (guard.c). */
#ifndef CT_ENGINE_GUARD_H
#define CT_ENGINE_GUARD_H

#include <stddef.h>

/* Catch SIGBUS raised by reads of [base, base+len) (the shared file was
 * truncated): the mapping is replaced by zero pages and the engine carries on;
 * ct_guard_tripped() tells it to stop harvesting. Returns 0 or -errno. */
int ct_guard_install(void *base, size_t len);
/* 1 once the guard has replaced the mapping. */
int ct_guard_tripped(void);

#endif /* CT_ENGINE_GUARD_H */
