/* grow.h - the one growable array: a table kept as a pointer and a
 * capacity grows by doubling to fit (the engine's sort arrays, the
 * symbolizer's and the dashboard model's tables). Header-only, so that any
 * module may use it without another object to link. */
#ifndef CT_COMMON_GROW_H
#define CT_COMMON_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Grows *v (elements of size bytes, *cap of them) to hold need, doubling
 * from *cap, or from first when empty. 0 or -ENOMEM (then *v and *cap are
 * unchanged). The caller owns *v (heap: free it). */
static inline int ct_grow(void **v, size_t *cap, size_t need, size_t size, size_t first) {
  if (need <= *cap)
    return 0;
  size_t nc = *cap ? *cap : first;
  while (nc < need)
    nc *= 2;
  if (nc > SIZE_MAX / size)
    return -ENOMEM;
  void *p = realloc(*v, nc * size);
  if (!p)
    return -ENOMEM;
  *v = p;
  *cap = nc;
  return 0;
}

#endif /* CT_COMMON_GROW_H */
