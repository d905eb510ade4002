/* corotracer.h - the probe SDK: record coroutine state changes for corotracer.
 *
 * Link with -lcorotracer (pkg-config corotracer). Run the program under
 * `corotracer run -- ./prog` to trace it; run it alone and every call below is
 * a cheap no-op.
 *
 * Threads: every function is thread-safe and lock-free; none makes a syscall on
 * the hot path (suspend, resume, wake). The probe never prints, except one line
 * on stderr when CTP_* variables are present but the probe cannot attach.
 *
 * Errors: functions returning int return 0 or a negative errno value.
 */
#ifndef COROTRACER_H
#define COROTRACER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define COROTRACER_API __attribute__((visibility("default")))
#else
#define COROTRACER_API
#endif

/* A traced coroutine. Opaque; NULL means "not traced" and is accepted by every
 * function below. Owned by the probe: valid until corotracer_destroy(). */
typedef struct corotracer_co corotracer_co;

/* What a suspended coroutine waits for (enum ctp_wait on the wire). */
enum corotracer_wait {
  COROTRACER_WAIT_NONE = 0,
  COROTRACER_WAIT_FD = 1,  /* obj is a file descriptor */
  COROTRACER_WAIT_PTR = 2, /* obj is the address of a wait object */
};

/* The site worth showing: pass COROTRACER_CALLER from inside a scheduler
 * primitive (block(), yield(), spawn()) so the report names the primitive's
 * caller, not the primitive. NULL means "the caller of the probe function". */
#define COROTRACER_CALLER (__builtin_extract_return_addr(__builtin_return_address(0)))

/* Attach to the engine named by CTP_SHM_PATH, CTP_SOCK_PATH and
 * CTP_MAX_STATIONS. Idempotent and thread-safe; the other calls attach on
 * first use, so calling it is optional. Returns 0 when tracing, -ENOENT when
 * the variables are absent (silently untraced), another negative errno when
 * they are present but unusable (one line on stderr, untraced). */
COROTRACER_API int corotracer_init(void);

/* 1 when this process is traced, 0 otherwise. */
COROTRACER_API int corotracer_enabled(void);

/* Record the creation of a coroutine and return its handle (NULL when
 * untraced or when no station is free). id: a unique non-zero id (e.g. the
 * coroutine's address); label: a short name, copied (may be NULL, truncated to
 * 63 bytes); site: creation site, NULL for the caller. The creator (the
 * coroutine running on this thread, if any) is recorded as the parent. */
COROTRACER_API corotracer_co *corotracer_create(uint64_t id, const char *label, const void *site);

/* The coroutine stops running. site: where (NULL for the caller); wait/obj:
 * what it waits for (COROTRACER_WAIT_NONE, 0 for a plain yield). */
COROTRACER_API void corotracer_suspend(corotracer_co *co, const void *site, enum corotracer_wait wait,
                                       uint64_t obj);

/* The coroutine starts or continues running on this thread. */
COROTRACER_API void corotracer_resume(corotracer_co *co);

/* Make co runnable. Call it where the scheduler decides to wake co (before it
 * is queued), from a coroutine or a plain thread; the waker is recorded.
 * site: NULL for the caller. */
COROTRACER_API void corotracer_wake(corotracer_co *co, const void *site);

/* The coroutine is gone. The handle is invalid afterwards. */
COROTRACER_API void corotracer_destroy(corotracer_co *co);

/* The coroutine running on this thread (set by resume, cleared by suspend and
 * destroy), or NULL. */
COROTRACER_API corotracer_co *corotracer_current(void);

/* Events this process has recorded and events it could not record (no station,
 * or a slot lapped while being written), since attach. For tests and summaries. */
COROTRACER_API void corotracer_stats(uint64_t *recorded, uint64_t *dropped);

#ifdef __cplusplus
}
#endif
#endif /* COROTRACER_H */
