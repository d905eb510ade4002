/* assets.c - the dashboard's page sources (web/dashboard.{html,css,js},
 * nav.js, timeline.js) linked into the binary with the assembler's .incbin:
 * plain `make` needs no generator, no node and no network. Paths are relative to the top of the
 * tree, where make runs; build.mk makes this object depend on the files. */
#include "html/assets.h"

/* Each asset: a start label, its files' bytes (CT_FILE each), a NUL, an end label. */
#define CT_FILE(path) ".incbin \"" path "\"\n"
#define CT_TEXT(text) ".ascii \"" text "\"\n"
#define CT_ASSET(sym, files)                                                                       \
  __asm__(".section .rodata\n"                                                                     \
          ".balign 16\n"                                                                           \
          ".globl " #sym "\n"                                                                      \
          ".hidden " #sym "\n" #sym ":\n" files ".byte 0\n"                                        \
          ".globl " #sym "_end\n"                                                                  \
          ".hidden " #sym "_end\n" #sym "_end:\n"                                                  \
          ".previous\n")

CT_ASSET(ct_asset_html, CT_FILE("web/dashboard.html"));
CT_ASSET(ct_asset_css, CT_FILE("web/dashboard.css"));
/* One script: nav.js first, as dashboard.js calls it (ctNav) from its start;
 * then timeline.js and dashboard.js in one function, whose scope they share
 * (timeline.js first: dashboard.js ends by starting the page). */
CT_ASSET(ct_asset_js,
         CT_FILE("web/nav.js") CT_TEXT("(function () {\\n'use strict';\\n")
             CT_FILE("web/timeline.js") CT_FILE("web/dashboard.js") CT_TEXT("})();\\n"));

size_t ct_asset_len(const char *start, const char *end) {
  return (size_t)(end - start) - 1; /* without the NUL */
}
