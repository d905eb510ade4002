/* test-run-opts.c - unit test of `corotracer run`'s defaults that depend on
 * the mode (src/run/opts.c): the capture memory and the ring size a run gets
 * when it does not name them, as docs/FLIGHT.md "Memory" and `run --help`
 * state them (issue #32: --flight's 32 MiB of capture, 16 with --lossless),
 * and a value given always winning. */
#include "engine/opts.h"
#include "lib/check.h"

#include <string.h>

/* Parse `run ARGS -- true` (ARGS NULL-terminated, at most 8) into *o; the
 * parser's return. */
static int parse(struct ct_opts *o, const char *const *args) {
  char *argv[16];
  char why[256] = "";
  int argc = 0;
  argv[argc++] = "run";
  for (; *args; args++)
    argv[argc++] = (char *)*args;
  argv[argc++] = "--";
  argv[argc++] = "true";
  argv[argc] = NULL;
  int rc = ct_opts_parse(o, argc, argv, why, sizeof why);
  if (rc)
    fprintf(stderr, "test-run-opts: %s\n", why);
  return rc;
}

/* The capture and ring defaults of one mode. */
static void expect(const char *const *args, uint32_t capture_mib, uint32_t ring_kib) {
  struct ct_opts o;
  ASSERT_EQ(parse(&o, args), 0);
  ASSERT_EQ(o.capture_mib, capture_mib);
  ASSERT_EQ(o.ring_kib, ring_kib);
}

int main(void) {
  expect((const char *[]){"-o", "t.ctrace", NULL}, 64, 1024);
  expect((const char *[]){"--flight", "64M", "-o", "d.ctrace", NULL}, 32, 1024);
  expect((const char *[]){"--flight", "64M", "--lossless", "-o", "d.ctrace", NULL}, 16, 512);
  expect((const char *[]){"--no-realtime", "--flight", "8M", "-o", "d.ctrace", NULL}, 32, 1024);
  /* Given, whatever the mode. */
  expect((const char *[]){"--flight", "64M", "--capture-mib", "8", "--ring-kib", "64", "-o",
                          "d.ctrace", NULL},
         8, 64);
  expect((const char *[]){"--capture-mib", "128", "-o", "t.ctrace", NULL}, 128, 1024);
  printf("test-run-opts: ok\n");
  return 0;
}
