/* rip_load.c - read rip ring files (raw, gzip, zlib) and order each ring by its counters. */
#include "rip/rip_load.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define WORDS_PER_RECORD (RIP_RECORD_SIZE / 8)
#define CHUNK (64 * 1024)
#define REREADS 3 /* extra reads of a raw record that cannot be ordered */

/* A record as stored: 40 little-endian u64 (8 of name, 32 of ring). */
struct raw_record {
  uint64_t w[WORDS_PER_RECORD];
};

/* Say why in why (one line, without the file name) and return code (-errno). */
__attribute__((format(printf, 4, 5))) static int fail(int code, char *why, size_t whylen,
                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, whylen, fmt, ap);
  va_end(ap);
  return code;
}

static uint64_t from_le(uint64_t v) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return __builtin_bswap64(v);
#else
  return v;
#endif
}

/* Contract in rip_load.h. */
int ct_rip_order(const uint64_t ring[RIP_RING_SIZE], struct ct_rip_thread *t, char *why,
                 size_t whylen) {
  uint64_t v[RIP_RING_SIZE];
  int n = 0, shift = -1, shift_slot = 0;
  t->exited = false;
  for (int s = 0; s < RIP_RING_SIZE; s++) {
    uint64_t e = ring[s];
    if (e == 0)
      continue;
    if (e == RIP_EXIT_MARKER) {
      t->exited = true;
      continue;
    }
    /* rip_snap advances rip_idx and rip_ctr together, so counter - slot is the
     * same (mod 32) for every entry since rip_init cleared the ring. */
    unsigned ctr = (unsigned)(e >> RIP_CTR_SHIFT);
    int d = (int)((ctr - (unsigned)s) & (RIP_RING_SIZE - 1));
    if (shift < 0) {
      shift = d;
      shift_slot = s;
    } else if (d != shift) {
      return fail(-EINVAL, why, whylen,
                  "entries cannot be ordered: slot %d holds counter %u, slot %d counter %u",
                  shift_slot, (unsigned)(ring[shift_slot] >> RIP_CTR_SHIFT), s, ctr);
    }
    /* Insertion sort by counter: at most 32 entries. */
    int i = n++;
    while (i > 0 && (v[i - 1] >> RIP_CTR_SHIFT) > ctr) {
      v[i] = v[i - 1];
      i--;
    }
    v[i] = e;
  }
  /* The oldest entry follows the largest gap between counters on the mod-256
   * circle (counters are distinct: distinct slots, same shift). */
  int start = 0;
  unsigned widest = 0;
  for (int i = 0; i < n; i++) {
    unsigned a = (unsigned)(v[i] >> RIP_CTR_SHIFT);
    unsigned b = (unsigned)(v[(i + 1) % n] >> RIP_CTR_SHIFT);
    unsigned gap = (b - a) & 0xff;
    if (gap == 0)
      gap = 256; /* a single entry */
    if (gap > widest) {
      widest = gap;
      start = (i + 1) % n;
    }
  }
  for (int i = 0; i < n; i++)
    t->e[i] = v[(start + i) % n];
  t->n = (uint8_t)n;
  return 0;
}

/* Order the record at index id and append it to out when its ring is used. */
static int take(struct ct_rip_threads *out, uint64_t id, const struct raw_record *r, char *why,
                size_t whylen) {
  uint64_t ring[RIP_RING_SIZE];
  bool used = false;
  for (int i = 0; i < RIP_RING_SIZE; i++) {
    ring[i] = from_le(r->w[RIP_NAME_SIZE / 8 + i]);
    used |= ring[i] != 0;
  }
  if (!used)
    return 0;
  if (out->n == out->cap) {
    size_t cap = out->cap ? out->cap * 2 : 64;
    struct ct_rip_thread *v = realloc(out->v, cap * sizeof *v);
    if (v == NULL) {
      return fail(-ENOMEM, why, whylen, "out of memory");
    }
    out->v = v;
    out->cap = cap;
  }
  struct ct_rip_thread *t = &out->v[out->n];
  char msg[160];
  int rc = ct_rip_order(ring, t, msg, sizeof msg);
  if (rc != 0)
    return fail(rc, why, whylen, "record %" PRIu64 ": %s", id, msg);
  t->id = id;
  memcpy(t->name, r->w, RIP_NAME_SIZE);
  t->name[RIP_NAME_SIZE] = '\0';
  out->n++;
  return 0;
}

static int check_size(uint64_t size, const char *what, char *why, size_t whylen) {
  if (size % RIP_RECORD_SIZE == 0)
    return 0;
  return fail(-EINVAL, why, whylen,
              "%s %" PRIu64 " is not a multiple of %d bytes: record %" PRIu64 " is truncated", what,
              size, RIP_RECORD_SIZE, size / RIP_RECORD_SIZE);
}

/* One record of a live map: an atomic load per word, as the writer stores. */
static void load_record(const uint64_t *words, struct raw_record *r) {
  for (int i = 0; i < WORDS_PER_RECORD; i++)
    r->w[i] = __atomic_load_n(&words[i], __ATOMIC_RELAXED);
}

static int take_live(struct ct_rip_threads *out, const uint64_t *words, uint64_t id, char *why,
                     size_t whylen) {
  struct raw_record r;
  for (int attempt = 0;; attempt++) {
    load_record(words + id * WORDS_PER_RECORD, &r);
    int rc = take(out, id, &r, why, whylen);
    if (rc == 0 || rc == -ENOMEM || attempt == REREADS)
      return rc;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

/* Raw regular file: map it and visit only its data extents (SEEK_DATA), so a
 * sparse ring sized for pid_max costs what its used records cost, and reading
 * does not fill the holes of a tmpfs file. */
static int load_mapped(int fd, uint64_t size, struct ct_rip_threads *out, char *why,
                       size_t whylen) {
  int rc = check_size(size, "size", why, whylen);
  if (rc != 0 || size == 0)
    return rc;
  void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    return fail(-errno, why, whylen, "cannot map: %s", strerror(errno));
  uint64_t next = 0, nrec = size / RIP_RECORD_SIZE;
  off_t pos = 0;
  while (rc == 0 && next < nrec) {
    off_t data = lseek(fd, pos, SEEK_DATA), hole;
    if (data < 0 && errno == ENXIO)
      break;
    if (data < 0) { /* no SEEK_DATA here: all of it is data */
      data = pos;
      hole = (off_t)size;
    } else if ((hole = lseek(fd, data, SEEK_HOLE)) < 0) {
      hole = (off_t)size;
    }
    uint64_t first = (uint64_t)data / RIP_RECORD_SIZE;
    uint64_t end = ((uint64_t)hole + RIP_RECORD_SIZE - 1) / RIP_RECORD_SIZE;
    if (first < next)
      first = next;
    if (end > nrec)
      end = nrec;
    for (uint64_t id = first; rc == 0 && id < end; id++)
      rc = take_live(out, map, id, why, whylen);
    next = end > next ? end : next;
    pos = hole;
    if ((uint64_t)pos >= size)
      break;
  }
  munmap(map, size);
  return rc;
}

/* Read up to len bytes, retrying on EINTR and short reads; returns the count
 * (less than len only at end of file) or -1. */
static ssize_t read_full(int fd, unsigned char *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, buf + got, len - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    got += (size_t)n;
  }
  return (ssize_t)got;
}

/* Split a byte stream into records. */
struct splitter {
  struct raw_record rec;
  size_t fill;    /* bytes of rec filled */
  uint64_t total; /* bytes seen */
};

static int split(struct splitter *sp, const unsigned char *p, size_t len,
                 struct ct_rip_threads *out, char *why, size_t whylen) {
  while (len > 0) {
    size_t k = RIP_RECORD_SIZE - sp->fill;
    if (k > len)
      k = len;
    memcpy((unsigned char *)sp->rec.w + sp->fill, p, k);
    sp->fill += k;
    sp->total += k;
    p += k;
    len -= k;
    if (sp->fill == RIP_RECORD_SIZE) {
      sp->fill = 0;
      int rc = take(out, sp->total / RIP_RECORD_SIZE - 1, &sp->rec, why, whylen);
      if (rc != 0)
        return rc;
    }
  }
  return 0;
}

/* gzip or zlib (inflateInit2 with 15 + 32 detects both); concatenated gzip
 * members are read in turn, as gzip -d does. in holds the first have bytes. */
static int load_compressed(int fd, unsigned char *in, size_t have, struct ct_rip_threads *out,
                           char *why, size_t whylen) {
  static unsigned char buf[CHUNK];
  struct splitter sp = {.fill = 0, .total = 0};
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK)
    return fail(-ENOMEM, why, whylen, "cannot start zlib");
  int rc, zr = Z_OK;
  z.next_in = in;
  z.avail_in = (uInt)have;
  for (;;) {
    if (z.avail_in == 0) {
      ssize_t n = read_full(fd, in, CHUNK);
      if (n < 0) {
        rc = fail(-errno, why, whylen, "read: %s", strerror(errno));
        goto out;
      }
      if (n == 0)
        break;
      z.next_in = in;
      z.avail_in = (uInt)n;
    }
    if (zr == Z_STREAM_END && inflateReset(&z) != Z_OK) {
      rc = fail(-ENOMEM, why, whylen, "cannot restart zlib");
      goto out;
    }
    z.next_out = buf;
    z.avail_out = sizeof buf;
    zr = inflate(&z, Z_NO_FLUSH);
    if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
      rc = fail(zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL, why, whylen,
                "bad compressed stream at byte %lu: %s", z.total_in,
                z.msg != NULL ? z.msg : zError(zr));
      goto out;
    }
    if ((rc = split(&sp, buf, sizeof buf - z.avail_out, out, why, whylen)) != 0)
      goto out;
  }
  if (zr != Z_STREAM_END) {
    rc = fail(-EINVAL, why, whylen, "truncated compressed stream (%" PRIu64 " bytes decompressed)",
              sp.total);
    goto out;
  }
  rc = check_size(sp.total, "decompressed size", why, whylen);
out:
  inflateEnd(&z);
  return rc;
}

/* A non-regular raw file (pipe, device): records as they come. */
static int load_stream(int fd, unsigned char *in, size_t have, struct ct_rip_threads *out,
                       char *why, size_t whylen) {
  struct splitter sp = {.fill = 0, .total = 0};
  for (;;) {
    int rc = split(&sp, in, have, out, why, whylen);
    if (rc != 0)
      return rc;
    ssize_t n = read_full(fd, in, CHUNK);
    if (n < 0)
      return fail(-errno, why, whylen, "read: %s", strerror(errno));
    if (n == 0)
      break;
    have = (size_t)n;
  }
  return check_size(sp.total, "size", why, whylen);
}

/* gzip magic, or a valid zlib header (deflate, window <= 32K, FCHECK). A raw
 * file starts with record 0's name, and record 0 is never used in practice:
 * rip_init(0, ...) means "my tid", and no thread has tid 0. */
static bool compressed(const unsigned char *p, size_t n) {
  if (n < 2)
    return false;
  if (p[0] == 0x1f && p[1] == 0x8b)
    return true;
  return (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && ((p[0] << 8) | p[1]) % 31 == 0;
}

/* Contract in rip_load.h. */
int ct_rip_load(const char *path, struct ct_rip_threads *out, char *why, size_t whylen) {
  static unsigned char in[CHUNK];
  memset(out, 0, sizeof *out);
  int rc;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(-errno, why, whylen, "%s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    rc = fail(-errno, why, whylen, "%s", strerror(errno));
    goto out;
  }
  ssize_t have = read_full(fd, in, 2);
  if (have < 0) {
    rc = fail(-errno, why, whylen, "read: %s", strerror(errno));
    goto out;
  }
  if (compressed(in, (size_t)have))
    rc = load_compressed(fd, in, (size_t)have, out, why, whylen);
  else if (S_ISREG(st.st_mode))
    rc = load_mapped(fd, (uint64_t)st.st_size, out, why, whylen);
  else
    rc = load_stream(fd, in, (size_t)have, out, why, whylen);
out:
  close(fd);
  if (rc != 0)
    ct_rip_threads_free(out);
  return rc;
}

/* Contract in rip_load.h. */
void ct_rip_threads_free(struct ct_rip_threads *t) {
  free(t->v);
  memset(t, 0, sizeof *t);
}
