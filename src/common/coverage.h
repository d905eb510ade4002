/* coverage.h - fast-path coverage counters (SQLite's testcase()): in a build
 * with -DCT_COVERAGE, CT_COVER(id) counts that a bail-out or branch of the
 * formatter's fast writers and encoders was taken, so a test can assert
 * that each one was (tests/test-rings-format.c); otherwise it compiles to
 * nothing. One id per branch, listed here. */
#ifndef CT_COVERAGE_H
#define CT_COVERAGE_H

#include <stdint.h>

enum ct_cov {
  /* ctrace_enc.c ct_ctw_switch */
  CT_COV_SW_THR_CUR, /* `from` is its thread's current coroutine */
  CT_COV_SW_THR_NEW, /* a thread given anew (tid, from) */
  CT_COV_SW_DETAIL,  /* a detail byte (no wake, or not plain) */
  CT_COV_SW_PRED,    /* `to` is from's successor */
  CT_COV_SW_TO_SLOT, /* `to` by its cache slot */
  CT_COV_SW_TO_NEW,  /* `to` given anew (probe_id, ev) */
  /* rings_format.c */
  CT_COV_EMIT_HIT, /* emit_hit wrote the record */
  CT_COV_EMIT_ALL, /* emit_all took it */
  CT_COV_SAME,     /* a stretch of one coroutine (emit_same) */
  CT_COV_TWO,      /* a stretch of two taking turns (emit_two) */
  CT_COV_SW_ENTRY, /* a switch record as one switch entry */
  CT_COV_SW_SPLIT, /* a switch record as its three events */
  CT_COV_N_
};

#ifdef CT_COVERAGE
extern uint64_t ct_cov_hits[CT_COV_N_];
#define CT_COVER(id) ((void)ct_cov_hits[(id)]++)
#else
#define CT_COVER(id) ((void)0)
#endif

#endif /* CT_COVERAGE_H */
