#!/bin/bash
# Fetches (once) the arm64 user space of the arm64 VM from Debian's archive: busybox and the
# tools the tests use (bash, e2fsprogs, fio, zramctl, mkswap, swapon, kmod, cmp, sha256sum) with
# every arm64 library they depend on, unpacked into ZRAM_RS_CACHE/arm64-userland. Prints that
# directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
out=$ZRAM_RS_CACHE/arm64-userland
packages=(busybox-static bash e2fsprogs fio util-linux mount kmod coreutils diffutils)
stamp="$out/.complete-$(echo "${packages[*]}" | sha256sum | cut -c1-12)"
if [ -f "$stamp" ]; then
	echo "$out"
	exit 0
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
fi
apt-get update -q >&2
# Every arm64 package the tools need, libraries included (M-A: same packages carry ":arm64").
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances "${packages[@]/%/:arm64}" |
	grep -E '^[a-z0-9][^ ]*:arm64$' | sort -u)
echo "arm64-userland: ${#closure[@]} packages" >&2
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
(cd "$download" && apt-get download -q "${closure[@]}" >&2)
rm -rf "$out"
mkdir -p "$out"
for deb in "$download"/*.deb; do
	dpkg-deb -x "$deb" "$out"
done
touch "$stamp"
echo "$out"
