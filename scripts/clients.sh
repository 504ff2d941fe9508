#!/bin/bash
# Fetches (once) the zram clients the x86_64 guest runs unchanged, from Debian's archive:
# Debian 12's systemd-zram-generator 1.1.2 (zram-generator and systemd-zram-setup@.service) and
# zram-tools (zramswap, /etc/default/zramswap), unpacked into ZRAM_RS_CACHE/clients/ROOT; and
# Debian 13's systemd-zram-generator 1.2.1 (the first to set recompression algorithms), with the
# Debian 13 C library and libgcc it was built against, unpacked into ROOT/debian13. Nothing is
# installed on this machine (the generator would set up zram swap at its next boot). The
# systemd pieces they call (systemd-makefs, systemd-detect-virt) and util-linux come from this
# machine's own packages (scripts/install-deps.sh). Prints the unpacked root; its VERSIONS file
# names the packages' suites and versions. (`clients.sh dir`: the directory, nothing fetched.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
packages=(systemd-zram-generator zram-tools)
packages_13=(systemd-zram-generator libc6 libgcc-s1)
out=$ZRAM_RS_CACHE/clients/$(echo "${packages[*]} / ${packages_13[*]}" | sha256sum | cut -c1-12)
if [ "${1:-}" = dir ]; then
	echo "$out"
	exit 0
fi
if [ -f "$out/VERSIONS" ]; then
	echo "$out"
	exit 0
fi
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
mkdir "$download/12" "$download/13"
(cd "$download/12" && apt-get download -q "${packages[@]}" >&2) || {
	apt-get update -q >&2
	(cd "$download/12" && apt-get download -q "${packages[@]}" >&2)
}
debian_download trixie "$download/13" "${packages_13[@]}"
rm -rf "$out"
mkdir -p "$out/debian13"
# unpack SUITE DIR ROOT: every package downloaded into DIR, unpacked into ROOT.
unpack() {
	local deb
	for deb in "$2"/*.deb; do
		dpkg-deb -x "$deb" "$3"
		echo "$1 $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$out/VERSIONS.new"
	done
}
unpack "Debian 12" "$download/12" "$out"
unpack "Debian 13" "$download/13" "$out/debian13"
mv "$out/VERSIONS.new" "$out/VERSIONS"
echo "$out"
