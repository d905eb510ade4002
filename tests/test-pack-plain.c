/* test-pack-plain.c - the probe's inline yield entry (src/probe/ring.h,
 * ct_pack_plain2) writes the bytes the pack format's encoder writes
 * (ctp_pk_put, src/format/pack_entry.h) and its readers read back: every
 * delta it takes (32 to 4,095 ticks), with and without a wake, for every
 * `to` distance it takes (zigzag below 0x80), and the byte past the entry's
 * three is the only one it adds. Exhaustive: ~1 M entries. */
#include <string.h>

#include "lib/check.h"
#include "probe/ring.h"

int main(void) {
  unsigned n = 0;
  for (uint64_t d = 32; d < 4096; d++)
    for (int wake = 0; wake < 2; wake++)
      for (uint64_t zz = 0; zz < 0x80; zz++) {
        uint32_t from = 1000;
        struct ctp_pk_entry en = {.dts = d,
                                  .from = from,
                                  .to = (uint32_t)((int64_t)from + ctr_unzigzag(zz)),
                                  .wake = (uint8_t)wake};
        uint8_t want[CTP_PK_ENTRY_MAX], got[4];
        ASSERT_EQ(ctp_pk_put(want, &en, from, 0) - want, 3);
        uint32_t w = ct_pack_plain2(d, wake, zz);
        memcpy(got, &w, sizeof w);
        ASSERT_MEM_EQ(got, want, 3);
        ASSERT_EQ(got[3], 0);
        struct ctp_pk_entry back;
        ASSERT(ctp_pk_get(got, got + 3, from, 0, &back) == got + 3);
        ASSERT_UINT64_EQ(back.dts, d);
        ASSERT_EQ(back.to, en.to);
        ASSERT_EQ(back.from, from);
        ASSERT_EQ(back.wake, wake);
        ASSERT_EQ(back.wait, 0);
        ASSERT_UINT64_EQ(back.obj, 0);
        n++;
      }
  printf("test-pack-plain: %u entries as ctp_pk_put writes them\n", n);
  return 0;
}
