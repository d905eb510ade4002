/* sched.h - the engine threads' scheduling: short slices, SCHED_FIFO (sched.c). */
#ifndef CT_ENGINE_SCHED_H
#define CT_ENGINE_SCHED_H

#include <pthread.h>
#include <stdint.h>

/* The harvest loop's slice when it runs SCHED_OTHER: the shortest the kernel
 * grants (0.1 ms). */
#define CT_SCHED_LOOP_SLICE_NS 100000u

/* Request a time slice of slice_ns for the calling thread, SCHED_OTHER at its
 * own nice (best effort, see sched.c): its wake-ups then preempt a busy CPU's
 * current task. Call it after the target is forked. Returns 0 or -errno. */
int ct_sched_short_slice(uint64_t slice_ns);

/* Give the calling thread SCHED_FIFO priority 1 (reset on fork: nothing it
 * forks or starts later inherits it). Needs CAP_SYS_NICE or RLIMIT_RTPRIO >=
 * 1. Returns 0 or -errno (EPERM). Only the harvest loop: the formatter and
 * every other thread stay SCHED_OTHER. */
int ct_sched_realtime(void);

/* Initialize *mu, a mutex the SCHED_FIFO harvest loop shares with a
 * SCHED_OTHER thread (the formatter), with priority inheritance: a holder
 * preempted by the program is raised while the loop waits, instead of
 * keeping the loop from its rings for the rest of a time slice. Falls back
 * to a plain mutex where PI is not supported. The caller owns *mu
 * (pthread_mutex_destroy). Returns 0 or -errno. */
int ct_sched_mutex_init(pthread_mutex_t *mu);

#endif /* CT_ENGINE_SCHED_H */
