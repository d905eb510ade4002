/* check.h - the assertions of the C tests (after libuv's test/task.h).
 *
 * A failed assertion prints one line, "file:line: Assertion failed: a == b
 * (3 == 4)", with both values, and ends the test with exit status 1, so a
 * test never goes on with state it has just found wrong. Each macro evaluates
 * its arguments once. Safe from any thread: the first failure ends the
 * process (_exit, after flushing stdout and stderr).
 *
 *   ASSERT(expr)                       any condition
 *   ASSERT_EQ/NE/LT/LE/GT/GE(a, b)     integers, compared as int64_t
 *   ASSERT_UINT64_EQ/NE/LT/LE/GT/GE    integers, compared as uint64_t
 *   ASSERT_STR_EQ/NE(a, b)             NUL-terminated strings (NULL allowed)
 *   ASSERT_MEM_EQ(a, b, n)             n bytes
 *   ASSERT_PTR_EQ/NE(a, b), ASSERT_NULL(p), ASSERT_NOT_NULL(p)
 *   ASSERT_OK(expr)                    expr == 0 (a 0 / -errno call): prints
 *                                      the error's name when it is not
 *   FAIL(fmt, ...)                     a failure only words describe (which
 *                                      line of a trace, what it held)
 *   CHECK_ATFAIL(fn)                   fn runs before a failure ends the test
 *                                      (_exit skips atexit: e.g. remove a big
 *                                      file the test made)
 *
 * Header-only: a test includes it and links nothing more. */
#ifndef CT_TESTS_CHECK_H
#define CT_TESTS_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The cleanup CHECK_ATFAIL registered, or NULL. */
static void (*check_atfail_)(void);
#define CHECK_ATFAIL(fn) (check_atfail_ = (fn))

/* Print the failure (fmt describes the values), run the registered cleanup
 * and end the test. */
__attribute__((format(printf, 3, 4), noreturn, unused)) static void
check_fail_(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  fprintf(stderr, "%s:%d: Assertion failed: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  if (check_atfail_)
    check_atfail_();
  _exit(1);
}

#define FAIL(...) check_fail_(__FILE__, __LINE__, __VA_ARGS__)

#define ASSERT(expr)                                                                               \
  do {                                                                                             \
    if (!(expr))                                                                                   \
      check_fail_(__FILE__, __LINE__, "%s", #expr);                                                \
  } while (0)

/* The expressions are stringified by the ASSERT_ macros themselves (as and
 * bs), so a macro argument (NULL, UINT64_MAX) is shown as written. */
#define CHECK_CMP_(type, fmt, a, op, b, as, bs)                                                    \
  do {                                                                                             \
    type check_a_ = (type)(a);                                                                     \
    type check_b_ = (type)(b);                                                                     \
    if (!(check_a_ op check_b_))                                                                   \
      check_fail_(__FILE__, __LINE__, "%s %s %s (%" fmt " %s %" fmt ")", as, #op, bs, check_a_,    \
                  #op, check_b_);                                                                  \
  } while (0)

#define ASSERT_EQ(a, b) CHECK_CMP_(int64_t, PRId64, a, ==, b, #a, #b)
#define ASSERT_NE(a, b) CHECK_CMP_(int64_t, PRId64, a, !=, b, #a, #b)
#define ASSERT_LT(a, b) CHECK_CMP_(int64_t, PRId64, a, <, b, #a, #b)
#define ASSERT_LE(a, b) CHECK_CMP_(int64_t, PRId64, a, <=, b, #a, #b)
#define ASSERT_GT(a, b) CHECK_CMP_(int64_t, PRId64, a, >, b, #a, #b)
#define ASSERT_GE(a, b) CHECK_CMP_(int64_t, PRId64, a, >=, b, #a, #b)

/* Unsigned values, printed in hex as well (addresses, bit patterns). */
#define CHECK_UCMP_(a, op, b, as, bs)                                                              \
  do {                                                                                             \
    uint64_t check_a_ = (uint64_t)(a);                                                             \
    uint64_t check_b_ = (uint64_t)(b);                                                             \
    if (!(check_a_ op check_b_))                                                                   \
      check_fail_(__FILE__, __LINE__,                                                              \
                  "%s %s %s (%" PRIu64 " [0x%" PRIx64 "] %s %" PRIu64 " [0x%" PRIx64 "])", as,     \
                  #op, bs, check_a_, check_a_, #op, check_b_, check_b_);                           \
  } while (0)

#define ASSERT_UINT64_EQ(a, b) CHECK_UCMP_(a, ==, b, #a, #b)
#define ASSERT_UINT64_NE(a, b) CHECK_UCMP_(a, !=, b, #a, #b)
#define ASSERT_UINT64_LT(a, b) CHECK_UCMP_(a, <, b, #a, #b)
#define ASSERT_UINT64_LE(a, b) CHECK_UCMP_(a, <=, b, #a, #b)
#define ASSERT_UINT64_GT(a, b) CHECK_UCMP_(a, >, b, #a, #b)
#define ASSERT_UINT64_GE(a, b) CHECK_UCMP_(a, >=, b, #a, #b)

/* Strings: NULL is a value of its own, equal only to NULL. */
#define CHECK_STR_(a, want_equal, b, as, bs)                                                       \
  do {                                                                                             \
    const char *check_a_ = (a);                                                                    \
    const char *check_b_ = (b);                                                                    \
    int check_eq_ = check_a_ == check_b_ ||                                                        \
                    (check_a_ != NULL && check_b_ != NULL && strcmp(check_a_, check_b_) == 0);     \
    if (check_eq_ != (want_equal))                                                                 \
      check_fail_(__FILE__, __LINE__, "%s %s %s (\"%s\" %s \"%s\")", as,                           \
                  (want_equal) ? "==" : "!=", bs, check_a_ ? check_a_ : "(null)",                  \
                  (want_equal) ? "==" : "!=", check_b_ ? check_b_ : "(null)");                     \
  } while (0)

#define ASSERT_STR_EQ(a, b) CHECK_STR_(a, 1, b, #a, #b)
#define ASSERT_STR_NE(a, b) CHECK_STR_(a, 0, b, #a, #b)

#define ASSERT_MEM_EQ(a, b, n)                                                                     \
  do {                                                                                             \
    size_t check_n_ = (n);                                                                         \
    if (memcmp((a), (b), check_n_) != 0)                                                           \
      check_fail_(__FILE__, __LINE__, "%s == %s (%zu bytes differ)", #a, #b, check_n_);            \
  } while (0)

#define CHECK_PTR_(a, op, b, as, bs)                                                               \
  do {                                                                                             \
    const void *check_a_ = (const void *)(a);                                                      \
    const void *check_b_ = (const void *)(b);                                                      \
    if (!(check_a_ op check_b_))                                                                   \
      check_fail_(__FILE__, __LINE__, "%s %s %s (%p %s %p)", as, #op, bs, check_a_, #op,           \
                  check_b_);                                                                       \
  } while (0)

#define ASSERT_PTR_EQ(a, b) CHECK_PTR_(a, ==, b, #a, #b)
#define ASSERT_PTR_NE(a, b) CHECK_PTR_(a, !=, b, #a, #b)
#define ASSERT_NULL(p) CHECK_PTR_(p, ==, NULL, #p, "NULL")
#define ASSERT_NOT_NULL(p) CHECK_PTR_(p, !=, NULL, #p, "NULL")

/* A call that returns 0 or -errno. */
#define ASSERT_OK(expr)                                                                            \
  do {                                                                                             \
    long check_r_ = (long)(expr);                                                                  \
    if (check_r_ != 0)                                                                             \
      check_fail_(__FILE__, __LINE__, "%s == 0 (%ld: %s)", #expr, check_r_,                        \
                  check_r_ < 0 ? strerror((int)-check_r_) : "not an error code");                  \
  } while (0)

#endif
