/* sink_cut.c - the formatter's trace after a write error (ENOSPC): cut back
 * to its last whole record, and ended with the cut marker. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/sink.h"
#include "format/ctrace.h"
#include "format/ctw.h"
#include "format/records.h"
#include "format/writer.h"

/* A record boundary at least room bytes before end in the trace on fd: the
 * end of a line, or of a chunk (walked from the file header; CHK3 or a
 * --pack trace's CHK4), or 0. Read through /proc: the writer's fd is
 * write-only. */
static uint64_t earlier_boundary(int fd, int binary, uint64_t end, size_t room) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int rfd = open(path, O_RDONLY | O_CLOEXEC);
  uint64_t b = 0, at = binary ? sizeof(struct ctr_file_hdr) : end;
  if (rfd < 0 || end < room)
    goto out;
  while (binary) { /* chunk by chunk, header only */
    struct ctr_chunk_hdr h;
    if (pread(rfd, &h, sizeof h, (off_t)at) != (ssize_t)sizeof h ||
        (h.tag != CTR_CHUNK_TAG && !ctr_chunk_packs(h.tag)))
      goto out; /* (pack chunks, CHK5 or CHK4: once its first cut the trace to nothing) */
    uint64_t next = at + sizeof h + h.len;
    if (next + room > end)
      goto out;
    b = at = next;
  }
  while (at > 0) { /* backwards to a '\n' room bytes before the end */
    size_t k = at < sizeof buf ? (size_t)at : sizeof buf;
    at -= k;
    if (pread(rfd, buf, k, (off_t)at) != (ssize_t)k)
      goto out;
    for (size_t i = k; i-- > 0;)
      if (buf[i] == '\n' && at + i + 1 + room <= end) {
        b = at + i + 1;
        goto out;
      }
  }
out:
  if (rfd >= 0)
    close(rfd);
  return b;
}

/* Contract: see sink.h. When the marker does not fit, the cut goes back
 * far enough for it: the room the cut frees is ours. */
void ct_sink_cut(struct ct_writer *w, int binary) {
  struct ct_writer m = {.fd = -1, .buf = malloc(CT_W_BUF)};
  uint8_t *chunk = NULL;
  if (!m.buf || (binary && !(chunk = malloc(sizeof(struct ctr_chunk_hdr) + 16 + CT_W_BUF)))) {
    (void)ct_writer_cut(w, NULL, 0);
    goto out;
  }
  ct_rec_cut(&m, w->err);
  size_t n = m.len;
  const void *mark = m.buf;
  if (binary) {
    n = ct_ctw_frame_line(m.buf, m.len - 1, chunk);
    mark = chunk;
  }
  if (ct_writer_cut(w, mark, n) == -ENOSPC) {
    w->safe = earlier_boundary(w->fd, binary, w->safe, n);
    (void)ct_writer_cut(w, mark, n);
  }
out:
  free(chunk);
  free(m.buf);
}
