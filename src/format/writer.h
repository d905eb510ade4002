/* writer.h - the trace writer: whole records buffered for a file or handed to a
 * drain (the engine's sink), formatted in place (writer.c). */
#ifndef CT_FORMAT_WRITER_H
#define CT_FORMAT_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Big enough that a busy harvest makes few write(2) calls. */
#define CT_W_BUF (256u * 1024u)
struct ct_writer {
  int fd;
  int err; /* first write error (errno), 0 if none */
  size_t len;
  char *buf;
  /* A text writer: flush hands the bytes to drain(drain_ctx, ...) instead of
   * writing fd (the engine's sink queues them for its formatter). */
  void (*drain)(void *ctx, const char *p, size_t n);
  void *drain_ctx;
  /* A file writer: bytes of the file so far (set by the caller after an
   * append open), and the end of its last whole record (line or chunk), to
   * cut a torn tail back to (ct_writer_cut). */
  uint64_t pos, safe;
  int binary; /* records are written whole by ct_writer_put, never split */
};

/* Open path (a new file renamed over it, or append) for writing, through
 * ct_outfile_trace (src/common/outfile.h). Returns 0 or -errno. */
int ct_writer_open(struct ct_writer *w, const char *path, int append);
/* Write the buffer out (EINTR, short writes handled). Returns 0 or -errno;
 * after an error every later write is discarded and w->err stays set. */
int ct_writer_flush(struct ct_writer *w);
/* Write n bytes as one whole record (a binary chunk), after what is
 * buffered: the file never holds part of it but after a failed write,
 * which ct_writer_cut removes. 0 or -errno (then w->err is set). */
int ct_writer_put(struct ct_writer *w, const void *p, size_t n);
/* After a write error: truncate the file back to w->safe (the end of its
 * last whole record), then append mark (n bytes: the marker record saying
 * why). 0, or -errno when the marker could not be written (the file then
 * ends at w->safe). The error stays set. */
int ct_writer_cut(struct ct_writer *w, const void *mark, size_t n);
/* Flush, fsync-free close. Returns 0 or the first error (-errno). */
int ct_writer_close(struct ct_writer *w);
/* n bytes of room at the end of the buffer (flushing first if needed), to
 * format a line in place with the ct_put_* helpers and ct_w_commit; NULL once
 * w->err is set. n must be at most the buffer size (256 KiB). */
char *ct_w_reserve(struct ct_writer *w, size_t n);
/* The reserved room is used up to end. */
void ct_w_commit(struct ct_writer *w, const char *end);
/* In-place formatting: each writes at p and returns the end. A string literal
 * is copied with a constant size (no strlen, no call). */
#define CT_PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)
static inline char *ct_put_u64(char *p, uint64_t v) { /* decimal, at most 20 bytes */
  char tmp[20];
  size_t i = sizeof(tmp);
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  memcpy(p, tmp + i, sizeof(tmp) - i);
  return p + sizeof(tmp) - i;
}
static inline char *ct_put_hex(char *p, uint64_t v) { /* "0x%016x" with quotes, 20 bytes */
  static const char digits[] = "0123456789abcdef";
  p[0] = '"';
  p[1] = '0';
  p[2] = 'x';
  for (int i = 0; i < 16; i++)
    p[3 + i] = digits[(v >> (60 - 4 * i)) & 0xf];
  p[19] = '"';
  return p + 20;
}
/* Append to the buffer, flushing when full; no-ops once w->err is set. */
void ct_w_raw(struct ct_writer *w, const char *s, size_t n);
void ct_w_str(struct ct_writer *w, const char *s);            /* raw C string */
void ct_w_u64(struct ct_writer *w, uint64_t v);               /* decimal */
void ct_w_hex(struct ct_writer *w, uint64_t v);               /* "0x%016x" with quotes */
void ct_w_json(struct ct_writer *w, const char *s, size_t n); /* quoted, escaped */

#endif /* CT_FORMAT_WRITER_H */
