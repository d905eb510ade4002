#!/bin/sh
# install-deps.sh - install the Debian packages the build and the tests need,
# only those that are missing, and name them. Safe to run again.
#   sh scripts/install-deps.sh         everything (`make check`)
#   sh scripts/install-deps.sh build   what `make` needs to build (`make`'s first step)
#   sh scripts/install-deps.sh demo    the build's, and redis-benchmark for `make demo`
set -eu
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# One line per concern, so each area adds its own.
PKGS_BUILD="build-essential clang clang-format pkg-config libdw-dev libelf-dev zlib1g-dev g++ libclang-rt-dev"
PKGS_EXPORT="libsqlite3-dev libpq-dev libmariadb-dev" # the export's client libraries (built in)
PKGS_CPP="libboost-fiber-dev libboost-dev libasio-dev" # the Boost.Fiber and Asio adapters
PKGS_DEMO="redis-tools" # redis-benchmark, the demo's load
PKGS_BENCH="gnuplot-nox" # bench/soak-flight.sh's plot
PKGS_TEST="git spin" # test-first-run clones the repository; spin checks the protocol model
PKGS_ARM="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
PKGS_WEB="chromium nodejs" # the dashboard's browser tests
PKGS_EXPORT_TEST="sqlite3 postgresql mariadb-server mariadb-client protobuf-compiler" # the export's tests
PKGS_FLEET_TEST="python3 util-linux" # test-fleet-pg: its JSON checks, unshare -u for simulated hosts
what=${1:-all}
pkgs="$PKGS_BUILD $PKGS_EXPORT $PKGS_CPP"
case $what in
  build) ;;
  demo) pkgs="$pkgs $PKGS_DEMO" ;;
  all) pkgs="$pkgs $PKGS_DEMO $PKGS_BENCH $PKGS_TEST $PKGS_ARM $PKGS_WEB $PKGS_EXPORT_TEST $PKGS_FLEET_TEST" ;;
  *) echo "usage: install-deps.sh [build|demo]" >&2; exit 2 ;;
esac
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: not Debian: install the equivalents of: $pkgs" >&2
  exit 0
fi
for p in $pkgs; do
  have_pkg "$p" || need="$need $p"
done
# The dashboard's browser tests: Debian's npm, unless a nodejs that bundles it is there.
[ "$what" != all ] || command -v npm >/dev/null 2>&1 || need="$need npm"
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-deps: missing packages:$need (run as root or install them)" >&2; exit 1
  fi
else SUDO=""; fi
echo "install-deps: installing ($what):$need"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need
