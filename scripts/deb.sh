#!/bin/bash
# make deb: builds the Debian package zram-rs-dkms (the module's sources for DKMS, debian/) with
# Debian's own tools (dpkg-buildpackage, debhelper, dh-dkms, installed when missing), from the
# files git tracks, and puts the .deb in dist/. Prints its path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
missing=()
for pkg in dpkg-dev debhelper dh-dkms; do
	dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} != 0 ]; then
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 || {
		apt-get update -q >&2
		apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
	}
fi
version=$(cd "$ZRAM_RS_TOP" && dpkg-parsechangelog -SVersion)
kbuild_version=$(sed -n 's/^zram_rs_version := //p' "$ZRAM_RS_TOP/Kbuild")
[ "$version" = "$kbuild_version" ] || {
	echo "deb: debian/changelog says $version, Kbuild's zram_rs_version $kbuild_version" >&2
	exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/zram-rs-$version
mkdir -p "$tree"
(cd "$ZRAM_RS_TOP" && git ls-files -z | xargs -0 cp --parents -t "$tree")
(cd "$tree" && dpkg-buildpackage -b -us -uc >&2)
mkdir -p "$ZRAM_RS_TOP/dist"
deb=$ZRAM_RS_TOP/dist/zram-rs-dkms_${version}_all.deb
# (Renamed into place: another run's reader of the previous file keeps a whole one.)
cp "$work/zram-rs-dkms_${version}_all.deb" "$deb.new.$$"
mv -f "$deb.new.$$" "$deb"
echo "$deb"
