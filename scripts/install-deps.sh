#!/bin/sh
# install-deps.sh - install the Debian packages the build and the tests need,
# only those that are missing. Safe to run again.
set -eu
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in build-essential clang pkg-config libdw-dev libelf-dev zlib1g-dev redis-tools g++ \
         libclang-rt-dev spin; do
  have_pkg "$p" || need="$need $p"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-deps: missing packages:$need (run as root or install them)" >&2; exit 1
  fi
else SUDO=""; fi
echo "install-deps: installing$need"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need
