/* librip.h - librip's header name: programs written against librip build
 * unchanged (`#include "librip.h"`). The API lives in rip.h. */
#ifndef LIBRIP_COMPAT_H
#define LIBRIP_COMPAT_H
#include "rip.h"
#endif
