/* buf.h - the one growable byte buffer (capacity doubles from 4 KiB): the
 * dashboard's page, model blob and HTTP replies, the export's COPY data and
 * labels, the flight window's live frames. Allocation failures are sticky
 * (err = -ENOMEM); check err once at the end instead of after every append,
 * or the return of ct_buf_reserve / ct_buf_put where a failure must stop at
 * once. A zeroed struct ct_buf is empty and ready; it owns p (heap, free
 * with ct_buf_free) until a caller takes p over and zeroes the struct. */
#ifndef CT_COMMON_BUF_H
#define CT_COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>

struct ct_buf {
  char *p;
  size_t n, cap;
  int err;
};

/* Room for `more` bytes after p[n]; returns 0 or -ENOMEM (also stored in err). */
int ct_buf_reserve(struct ct_buf *b, size_t more);
/* Append p[0..n): 0, or -ENOMEM (also stored in err; then nothing is
 * appended, and nothing is by any later call). */
int ct_buf_put(struct ct_buf *b, const void *p, size_t n);
void ct_buf_puts(struct ct_buf *b, const char *s);
void ct_buf_printf(struct ct_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s[0..n) as a JSON string (quotes included) through the one escaper
 * (common/jsonesc.h, strict UTF-8), '<' and '>' escaped too, so the text is
 * inert wherever it is pasted. */
void ct_buf_json(struct ct_buf *b, const char *s, size_t n);
/* Zero bytes up to the next multiple of align. */
void ct_buf_align(struct ct_buf *b, size_t align);
/* Free p; b is empty (zeroed) afterwards, and reusable. */
void ct_buf_free(struct ct_buf *b);

#endif /* CT_COMMON_BUF_H */
