#!/bin/bash
# Fetches (once) the zram clients the x86_64 guest runs unchanged, from Debian 12's archive:
# systemd-zram-generator (zram-generator and systemd-zram-setup@.service) and zram-tools
# (zramswap, /etc/default/zramswap), unpacked into ZRAM_RS_CACHE/clients/ROOT; nothing is
# installed on this machine (the generator would set up zram swap at its next boot). The
# systemd pieces they call (systemd-makefs, systemd-detect-virt) and util-linux come from this
# machine's own packages (scripts/install-deps.sh). Prints the unpacked root; its VERSIONS file
# names the packages' versions.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
packages=(systemd-zram-generator zram-tools)
out=$ZRAM_RS_CACHE/clients/$(echo "${packages[*]}" | sha256sum | cut -c1-12)
if [ -f "$out/VERSIONS" ]; then
	echo "$out"
	exit 0
fi
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
(cd "$download" && apt-get download -q "${packages[@]}" >&2) || {
	apt-get update -q >&2
	(cd "$download" && apt-get download -q "${packages[@]}" >&2)
}
rm -rf "$out"
mkdir -p "$out"
for deb in "$download"/*.deb; do
	dpkg-deb -x "$deb" "$out"
	dpkg-deb -f "$deb" Package Version | paste -sd' ' >>"$out/VERSIONS.new"
done
sed -i 's/^Package: \(.*\) Version: /\1 /' "$out/VERSIONS.new"
mv "$out/VERSIONS.new" "$out/VERSIONS"
echo "$out"
