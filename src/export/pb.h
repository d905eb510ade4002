/* pb.h - a minimal protobuf encoder (varints, fixed64, length-delimited
 * fields with nested messages) writing into a growable buffer: enough for
 * Perfetto's TracePacket without a protobuf library. Internal to src/export. */
#ifndef CT_EXPORT_PB_H
#define CT_EXPORT_PB_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define PB_DEPTH 8

struct pb {
  struct ct_buf buf;     /* the encoded bytes */
  size_t open[PB_DEPTH]; /* offsets of the nested messages' length slots */
  int depth;
  int bad; /* ENOMEM or nesting too deep: the buffer is unusable */
};

void pb_reset(struct pb *b); /* empties, keeps the memory */
void pb_free(struct pb *b);
void pb_varint(struct pb *b, uint32_t field, uint64_t v);
void pb_fixed64(struct pb *b, uint32_t field, uint64_t v);
void pb_bytes(struct pb *b, uint32_t field, const void *s, size_t n);
/* A string field (s NUL-terminated), made valid UTF-8 as protobuf requires (ct_utf8_clean). */
void pb_string(struct pb *b, uint32_t field, const char *s);
/* A nested message: pb_begin(field) ... pb_end(). */
void pb_begin(struct pb *b, uint32_t field);
void pb_end(struct pb *b);

#endif
