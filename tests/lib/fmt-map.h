/* fmt-map.h - a cTP mapping laid out as the engine lays it out (ct_layout),
 * for feeding the engine's formatter capture blocks without a target
 * (tests/test-rings-format.c, bench/bench-format.c). */
#ifndef CT_FMT_MAP_H
#define CT_FMT_MAP_H

#include <stddef.h>
#include <stdint.h>

/* A zeroed, page-aligned mapping of `stations` stations and `rings` rings of
 * 4 KiB, its header's magic, version, max_stations and v2 layout set; *len
 * gets its size. The caller sets allocated_count and the stations, and frees
 * it with free(). NULL: no memory. */
void *ct_fmt_map(uint32_t stations, uint32_t rings, size_t *len);

#endif /* CT_FMT_MAP_H */
