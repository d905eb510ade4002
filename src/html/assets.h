/* assets.h - the page sources embedded in the binary (assets.c). Each is
 * NUL-terminated; its length is ct_asset_len(x, x_end). */
#ifndef CT_HTML_ASSETS_H
#define CT_HTML_ASSETS_H

#include <stddef.h>

extern const char ct_asset_html[], ct_asset_html_end[];
extern const char ct_asset_css[], ct_asset_css_end[];
extern const char ct_asset_js[], ct_asset_js_end[];

size_t ct_asset_len(const char *start, const char *end);

#endif
