#!/bin/sh
# check.sh - the AArch64 leg of `make check`: cross-builds the library, the C
# examples and the tests that need no libdw into build/arm, then runs them
# under qemu-user against the NATIVE engine and reader (build/default): the
# demo scheduler with both context switches, the probe, the engine round trip
# and the demo server end to end, and rings written by ARM programs read by
# the native `corotracer rip`. qemu-user proves the code runs on AArch64; it
# does not reproduce weak memory ordering (docs/AARCH64.md says what needs a
# real ARM machine).
#
# Usage: sh tests/arm/check.sh [TEST...]   (from the top of the tree; default:
# every test below). NATIVE (default build/default): the native build, whose
# engine and test tools are built here if missing; ARM_O (default build/arm)
# receives the cross build.
set -eu
NATIVE=${NATIVE:-build/default}
ARM_O=${ARM_O:-build/arm}
CROSS_CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
SYSROOT=${ARM_SYSROOT:-/usr/aarch64-linux-gnu}
MAKE=${MAKE:-make}
top=$(pwd)

for t in "$CROSS_CC" qemu-aarch64; do
  command -v "$t" >/dev/null 2>&1 || { echo "arm: $t not installed (sh scripts/install-deps.sh)"; exit 1; }
done
[ -d "$SYSROOT/lib" ] || { echo "arm: no AArch64 libc in $SYSROOT (libc6-dev-arm64-cross)"; exit 1; }

# Programs run under qemu, wrapped so that the engine and the test scripts
# exec them as they would a native program: the ones the engine runs (exec
# qemu: the pid stays the engine's child), and the C tests tests/run.sh runs,
# bounded by ARM_TIMEOUT seconds (a broken context switch spins forever; 120 s
# is 100 times what test-demo-sched takes here). The rip programs are ELF files
# the native reader opens: test-rip.sh runs them through CT_RUN.
ARM_TIMEOUT=${ARM_TIMEOUT:-120}
TRACED="examples/hello examples/demo/resp_server"
CTESTS="tests/test-demo-ctx tests/test-demo-ctx-uc tests/test-demo-sched tests/test-demo-sched-uc tests/test-layout tests/test-probe tests/test-probe-v2
  tests/test-probe-fd tests/test-rip-api"
ELVES="tests/lib/rip-prog-pie tests/lib/rip-prog-nopie tests/lib/rip-prog-generic"
# Native tools of the test scripts, and the engine and reader.
NATIVE_TOOLS="bin/corotracer tests/lib/ctjl"

targets="$ARM_O/lib/libcorotracer.a $ARM_O/lib/libcorotracer.so"
for p in $TRACED $CTESTS $ELVES; do targets="$targets $ARM_O/$p"; done
# PKGS= : the cross build links no analysis library (the engine stays native).
$MAKE -j2 O="$ARM_O" CC="$CROSS_CC" SAN= PKGS= DEMO_CTX=aarch64 $targets
$MAKE -j2 O="$NATIVE" SAN= $(for t in $NATIVE_TOOLS; do printf '%s ' "$NATIVE/$t"; done)

# The run directory: what tests/run.sh calls the build (CT_BUILD), with the
# ARM programs at their usual paths.
R=$ARM_O/run
rm -rf "$R"
# wrap PREFIX PROGRAM...: $R/PROGRAM execs PREFIX qemu-aarch64 on the ARM build's.
wrap() {
  pre=$1; shift
  for p in "$@"; do
    mkdir -p "$R/$(dirname "$p")"
    printf '#!/bin/sh\nexec %sqemu-aarch64 -L "%s" "%s" "$@"\n' "$pre" "$SYSROOT" "$top/$ARM_O/$p" >"$R/$p"
    chmod +x "$R/$p"
  done
}
wrap "" $TRACED
wrap "timeout -k 5 $ARM_TIMEOUT " $CTESTS
for p in $ELVES; do mkdir -p "$R/$(dirname "$p")"; ln -s "$top/$ARM_O/$p" "$R/$p"; done
for p in $NATIVE_TOOLS; do mkdir -p "$R/$(dirname "$p")"; ln -s "$top/$NATIVE/$p" "$R/$p"; done

[ $# -gt 0 ] || set -- "$R/tests/test-demo-ctx" "$R/tests/test-demo-ctx-uc" "$R/tests/test-demo-sched" "$R/tests/test-demo-sched-uc" "$R/tests/test-layout" \
  "$R/tests/test-probe" "$R/tests/test-probe-v2" "$R/tests/test-probe-fd" tests/test-engine-roundtrip.sh \
  "$R/tests/test-rip-api" tests/test-rip.sh tests/test-demo-e2e.sh
export CT_RUN="qemu-aarch64 -L $SYSROOT"
O="$R" sh tests/run.sh "$@"
