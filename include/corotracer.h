/* corotracer.h - the probe SDK: record coroutine state changes for corotracer.
 *
 * Link with -lcorotracer (pkg-config corotracer). Run the program under
 * `corotracer run -- ./prog` to trace it; run it alone and every call below is
 * a cheap no-op.
 *
 * Threads: every function is thread-safe. The first call in a process attaches
 * (once, under pthread_once): it opens, checks and maps the shared memory and
 * connects to the engine, and may block other first callers until it is done,
 * up to about a second when the engine is slow to answer; call corotracer_init()
 * early to pay that at a moment of your choosing. Every later call is lock-free
 * and makes no syscall on the hot path (suspend, resume, wake, switch); only when the
 * engine sleeps does one event send it a wake-up byte. The probe never prints,
 * except one line on stderr when CTP_* variables are present but the probe
 * cannot attach.
 *
 * Errors: functions returning int return 0 or a negative errno value.
 *
 * fork(): a child forked from a process that has attached (or tried to) runs
 * untraced until it execs; handles inherited from the parent become no-ops and
 * never touch the parent's stations. A program that execs with the CTP_*
 * variables still set attaches again as a new process.
 *
 * Cost: with GCC or Clang, suspend, resume, wake, destroy(_at) and switch are inline
 * wrappers that test the handle for NULL before calling the library, so an
 * untraced program pays one predictable branch. The library also exports every
 * function under its plain name (for dlsym, FFI, and compilers without GNU C);
 * define COROTRACER_NO_INLINE before including this header to call those.
 */
#ifndef COROTRACER_H
#define COROTRACER_H

#include <stdint.h>

/* The release: the SDK's, the engine's (trace meta "engine") and the
 * pkg-config file's version, kept here only. */
#define COROTRACER_VERSION "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define COROTRACER_API __attribute__((visibility("default")))
#else
#define COROTRACER_API
#endif

/* A traced coroutine. Opaque; NULL means "not traced" and is accepted by every
 * function below (calls on NULL do nothing at all). Owned by the probe: valid
 * until corotracer_destroy(); afterwards its place may go to a new coroutine,
 * so a call on the old handle would be recorded as the new one's. */
typedef struct corotracer_co corotracer_co;

/* What a suspended coroutine waits for (enum ctp_wait on the wire). */
enum corotracer_wait {
  COROTRACER_WAIT_NONE = 0,
  COROTRACER_WAIT_FD = 1,   /* obj is a file descriptor */
  COROTRACER_WAIT_PTR = 2,  /* obj is the address of a wait object */
  COROTRACER_WAIT_EXIT = 3, /* not a wait: the coroutine returned (final suspend); obj 0 */
  /* obj is the id of the coroutine it waits for (a join, an await of a child):
   * corotracer_id() of its handle, or the id passed to corotracer_create. */
  COROTRACER_WAIT_COROUTINE = 4,
};

/* The site worth showing: pass COROTRACER_CALLER from inside a scheduler
 * primitive (block(), yield(), spawn()) so the report names the primitive's
 * caller, not the primitive. NULL means "the caller of the probe function"
 * (its return address; if the probe call is a tail call, the compiler makes
 * that the caller's caller). */
#define COROTRACER_CALLER (__builtin_extract_return_addr(__builtin_return_address(0)))

/* No site is known: for an adapter whose event comes from the runtime's own
 * loop (a wake that a scheduler's dispatcher processes for another thread's
 * notify, or for a timer), where the caller is the adapter and the user's line
 * cannot be learned. Accepted by every call taking a site; recorded as site 0,
 * which the report says as "site unknown", never as the adapter's line. */
#define COROTRACER_SITE_UNKNOWN ((const void *)1)

/* A text site: a token for file:line in function, usable as the site of
 * every call below (and of corotracer_create), for code that knows its line
 * but has no code address to give (generated code, an adapter of a runtime
 * that carries a source location). The strings are copied (each truncated to
 * 255 bytes; either may be NULL); the report shows them as they are, without
 * symbolization. The first call for a (file, line, function) writes them to the
 * engine's shared memory; later calls with the same pointers (string
 * literals, std::source_location) return the same token from a cache, under a
 * mutex: keep the token where a site is hot. NULL when untraced, under an
 * engine without text sites, or once their area (1 MiB) is full: the call
 * taking it then records its caller, as for NULL. */
COROTRACER_API const void *corotracer_site(const char *file, unsigned line, const char *function);

/* Attach to the engine named by CTP_SHM_PATH, CTP_SOCK_PATH and
 * CTP_MAX_STATIONS. Idempotent and thread-safe; the other calls attach on
 * first use, so calling it is optional. Returns 0 when tracing, -ENOENT when
 * the variables are absent (silently untraced), another negative errno when
 * they are present but unusable (one line on stderr, untraced), -ECHILD in a
 * child forked from a process that had attached (untraced, silent). */
COROTRACER_API int corotracer_init(void);

/* 1 when this process is traced, 0 otherwise. */
COROTRACER_API int corotracer_enabled(void);

/* The id a handle is traced under (the id given to corotracer_create, or the
 * one the probe picked for 0), for COROTRACER_WAIT_COROUTINE; 0 for NULL.
 * Valid until corotracer_destroy(co), like the handle. */
COROTRACER_API uint64_t corotracer_id(const corotracer_co *co);

/* Record the creation of a coroutine and return its handle (NULL when
 * untraced or when no station is free). id: a unique non-zero id (e.g. the
 * coroutine's address); 0 lets the probe pick one (bit 63 set, so it never
 * collides with an address); label: a short name, copied (may be NULL,
 * truncated to 63 bytes); site: creation site, NULL for the caller. The
 * creator (the coroutine running on this thread, if any) is recorded as the
 * parent. */
COROTRACER_API corotracer_co *corotracer_create(uint64_t id, const char *label, const void *site);

/* The coroutine running on this thread (set by resume, cleared by suspend and
 * destroy), or NULL. */
COROTRACER_API corotracer_co *corotracer_current(void);

/* Events this process has recorded and events it could not record, since
 * attach. recorded: events claimed on the stations this process owns (the
 * sum of their ev_claimed; events later dropped included). dropped: create events of coroutines
 * that got no station, plus events dropped because their slot was being written or had already been
 * lapped (many writers racing on one coroutine). Under our engine's per-thread rings (v2):
 * recorded counts the events written into this process's threads' rings plus those dropped, and
 * dropped the events of a full ring (or a thread that found no ring, or, under the flight
 * recorder, written and then given up for newer ones) plus creates that got no station. Both 0 when
 * untraced. Once the probe found the shared memory corrupt and stopped tracing (its one line on
 * stderr), recorded is 0 and dropped counts the events that found it: the memory is not read again.
 * Either pointer may be NULL. For tests and summaries; exact when the process's threads are not
 * writing. */
COROTRACER_API void corotracer_stats(uint64_t *recorded, uint64_t *dropped);

/* The out-of-line halves of the calls below: they accept NULL too. Call the
 * plain names; these exist so the NULL test can be inlined. */
COROTRACER_API void corotracer__suspend(corotracer_co *co, const void *site,
                                        enum corotracer_wait wait, uint64_t obj);
COROTRACER_API void corotracer__resume(corotracer_co *co);
COROTRACER_API void corotracer__wake(corotracer_co *co, const void *site);
COROTRACER_API void corotracer__destroy(corotracer_co *co);
COROTRACER_API void corotracer__destroy_at(corotracer_co *co, const void *site);
COROTRACER_API void corotracer__switch(corotracer_co *from, const void *site,
                                       enum corotracer_wait wait, uint64_t obj, unsigned flags,
                                       corotracer_co *to);

#if defined(__GNUC__) && !defined(COROTRACER_NO_INLINE)
/* always_inline even at -O0: the library takes its own return address as the
 * default site, which must land in the caller, not in a wrapper copy. */
#define COROTRACER_INLINE_ static inline __attribute__((always_inline))
#endif

/* The coroutine stops running. site: where (NULL for the caller); wait/obj:
 * what it waits for (COROTRACER_WAIT_NONE, 0 for a plain yield). */
#ifdef COROTRACER_INLINE_
COROTRACER_INLINE_ void corotracer_suspend(corotracer_co *co, const void *site,
                                           enum corotracer_wait wait, uint64_t obj) {
  if (co)
    corotracer__suspend(co, site, wait, obj);
}
#else
COROTRACER_API void corotracer_suspend(corotracer_co *co, const void *site,
                                       enum corotracer_wait wait, uint64_t obj);
#endif

/* The coroutine starts or continues running on this thread. */
#ifdef COROTRACER_INLINE_
COROTRACER_INLINE_ void corotracer_resume(corotracer_co *co) {
  if (co)
    corotracer__resume(co);
}
#else
COROTRACER_API void corotracer_resume(corotracer_co *co);
#endif

/* Make co runnable. Call it where the scheduler decides to wake co (before it
 * is queued), from a coroutine or a plain thread; the waker is recorded.
 * site: NULL for the caller. */
#ifdef COROTRACER_INLINE_
COROTRACER_INLINE_ void corotracer_wake(corotracer_co *co, const void *site) {
  if (co)
    corotracer__wake(co, site);
}
#else
COROTRACER_API void corotracer_wake(corotracer_co *co, const void *site);
#endif

/* The coroutine returned (finished its body): its final suspend. A finished
 * coroutine is not waiting for anything, so the report never calls it a lost
 * wakeup; freed later (corotracer_destroy) or never (then a leak only). C++'s
 * final_suspend is the place (PromiseMixin::returned() in corotracer.hpp).
 * site: NULL for the caller. A macro, so that the default site is the
 * caller's also with COROTRACER_NO_INLINE. */
#define corotracer_exit(co, site) corotracer_suspend((co), (site), COROTRACER_WAIT_EXIT, 0)

/* The coroutine is gone. The handle is invalid afterwards. */
#ifdef COROTRACER_INLINE_
COROTRACER_INLINE_ void corotracer_destroy(corotracer_co *co) {
  if (co)
    corotracer__destroy(co);
}
#else
COROTRACER_API void corotracer_destroy(corotracer_co *co);
#endif

/* corotracer_destroy, with the site that destroys the coroutine: for a
 * destroy reached through code that is not worth naming (a promise's or a
 * task's destructor, a container's erase), pass the line that caused it,
 * e.g. the owner's erase (corotracer.hpp finds it on the stack). site: NULL
 * for the caller, as corotracer_destroy; COROTRACER_SITE_UNKNOWN, a code
 * address or a corotracer_site() token, as for the other calls. The call
 * consumes the handle (invalid afterwards) and borrows site: a token stays
 * the probe's, a code address is only recorded. */
#ifdef COROTRACER_INLINE_
COROTRACER_INLINE_ void corotracer_destroy_at(corotracer_co *co, const void *site) {
  if (co)
    corotracer__destroy_at(co, site);
}
#else
COROTRACER_API void corotracer_destroy_at(corotracer_co *co, const void *site);
#endif

/* corotracer_switch flags. */
#define COROTRACER_SWITCH_RUNNABLE 1u /* `from` stays runnable (a yield): also record its wake */

/* One context switch on this thread, `from` out and `to` in, recorded as the
 * separate calls would record it but, under our engine's per-thread rings,
 * with one clock read and one publish (elsewhere, as the three calls): the
 * suspend of `from` (site, wait, obj as corotracer_suspend), with
 * COROTRACER_SWITCH_RUNNABLE its wake (same site; the waker is the coroutine
 * this thread runs once `from` left, as for a corotracer_wake after the
 * suspend: none in a scheduler loop), then the resume of `to`, all with the
 * same time stamp, in that order. Either handle may be NULL: from NULL
 * records only the resume of `to`, to NULL only the suspend (and wake) of
 * `from`; both NULL, nothing. Call it where the scheduler hands the thread
 * from one coroutine to the next, before either could run elsewhere: `from`
 * must not be queued where another thread can resume it before this call, or
 * that resume would precede this suspend. Afterwards corotracer_current() is
 * `to` (or, with to NULL, as after corotracer_suspend). Neither handle is
 * consumed: both stay valid until their corotracer_destroy(). site: NULL for
 * the caller. */
#ifdef COROTRACER_INLINE_
COROTRACER_INLINE_ void corotracer_switch(corotracer_co *from, const void *site,
                                          enum corotracer_wait wait, uint64_t obj, unsigned flags,
                                          corotracer_co *to) {
  if (from || to)
    corotracer__switch(from, site, wait, obj, flags, to);
}
#else
COROTRACER_API void corotracer_switch(corotracer_co *from, const void *site,
                                      enum corotracer_wait wait, uint64_t obj, unsigned flags,
                                      corotracer_co *to);
#endif

#ifdef __cplusplus
}
#endif
#endif /* COROTRACER_H */
