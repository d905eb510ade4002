/* demangle.h - common Itanium C++ names demangled without libstdc++
 * (demangle.c), for the symbolizer. */
#ifndef CT_SYMBOLIZE_DEMANGLE_H
#define CT_SYMBOLIZE_DEMANGLE_H

#include <stddef.h>

/* The name part of mangled C++ name m ("_ZN2ns1fEv" -> "ns::f") into out (n
 * bytes), with a trailing clone suffix in letters (".cold", ".actor") kept.
 * 1 on success, 0 when m is not a form it knows (keep it mangled). */
int ct_demangle(const char *m, char *out, size_t n);

#endif
