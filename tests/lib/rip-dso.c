/* rip-dso.c - a shared library that snapshots, for test-rip.sh (symbolizing DSOs). */
#include "rip.h"

/* Snapshot here, store the snapshot's line in *line, and return. */
__attribute__((visibility("default"), noinline)) void dso_park(int *line) {
  /* One line: the snapshot's line is the one stored. */
  // clang-format off
  __atomic_store_n(line, __LINE__, __ATOMIC_RELAXED); rip_snap();
  // clang-format on
}
