/* assets.c - the dashboard's page sources (web/dashboard.{html,css,js}) linked
 * into the binary with the assembler's .incbin: plain `make` needs no
 * generator, no node and no network. Paths are relative to the top of the
 * tree, where make runs; build.mk makes this object depend on the files. */
#include "html/assets.h"

/* Each asset: a start label, the file's bytes, a NUL, an end label. */
#define CT_ASSET(sym, path)                                                                        \
  __asm__(".section .rodata\n"                                                                     \
          ".balign 16\n"                                                                           \
          ".globl " #sym "\n"                                                                      \
          ".hidden " #sym "\n" #sym ":\n"                                                          \
          ".incbin \"" path "\"\n"                                                                 \
          ".byte 0\n"                                                                              \
          ".globl " #sym "_end\n"                                                                  \
          ".hidden " #sym "_end\n" #sym "_end:\n"                                                  \
          ".previous\n")

CT_ASSET(ct_asset_html, "web/dashboard.html");
CT_ASSET(ct_asset_css, "web/dashboard.css");
CT_ASSET(ct_asset_js, "web/dashboard.js");

size_t ct_asset_len(const char *start, const char *end) {
  return (size_t)(end - start) - 1; /* without the NUL */
}
