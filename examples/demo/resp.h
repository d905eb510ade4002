/* resp.h - the RESP (Redis wire protocol) side of the demo server: parse
 * requests, run commands on an in-memory key-value store, format replies. */
#ifndef DEMO_RESP_H
#define DEMO_RESP_H

#include <stddef.h>
#include <sys/types.h>

/* Reply buffer, owned by the caller (the connection's stack). */
struct resp_out {
  char *buf;
  size_t len, cap;
};

/* Largest request a connection accepts, and room kept free in the reply
 * buffer before a command runs (its reply must fit). */
#define RESP_MAX_REQUEST 16384
#define RESP_REPLY_ROOM (RESP_MAX_REQUEST + 64)

/* Run the complete commands at the start of in[0..n), appending replies to
 * out while out keeps RESP_REPLY_ROOM free. Returns the bytes consumed (0: no
 * complete command yet), or -1 on a protocol error (an error reply is
 * appended: send it and close). Sets *quit after QUIT. *commands counts the
 * commands run. */
ssize_t resp_execute(const char *in, size_t n, struct resp_out *out, int *quit,
                     unsigned long *commands);

#endif
