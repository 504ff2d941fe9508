#!/bin/bash
# usage: debian-root.sh                 make (once) and print the root's directory
#        debian-root.sh run CMD [ARG...] run CMD inside it (/proc, /sys, /dev and /tmp mounted)
# A Debian 13 (trixie) root in the cache, as a Debian 13 user's machine: made with mmdebstrap
# from the mirror this machine's apt uses (its own sources are left alone), with trixie and
# trixie-backports in its sources, Debian 13's toolchain (rustc and rust-src 1.85.1, bindgen
# 0.71.1, gcc-14: what Debian built its 7.3 kernels with), dkms and what building a kernel's
# Rust artefacts needs. Kept under a key of its package list; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"

packages=(
	apt ca-certificates dkms build-essential gcc-14 rustc rust-src bindgen libclang-19-dev
	flex bison bc libelf-dev libssl-dev dwarves kmod cpio python3 openssl xz-utils
)
key=$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-12)
root=$ZRAM_RS_CACHE/debian/trixie-$key

make_root() {
	command -v mmdebstrap >/dev/null || {
		echo "debian-root: installing mmdebstrap" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >&2
	}
	local mirror keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	mirror=$(debian_mirror)
	mirror=${mirror%/}
	rm -rf "$root.new"
	mkdir -p "$(dirname "$root")"
	echo "debian-root: making a Debian 13 root from $mirror (a few minutes, once)" >&2
	mmdebstrap --mode=root --variant=apt --include="$(
		IFS=,
		echo "${packages[*]}"
	)" trixie "$root.new" \
		"deb [signed-by=$keyring] $mirror trixie main" \
		"deb [signed-by=$keyring] $mirror trixie-backports main" >&2
	mv "$root.new" "$root"
}

# in_root CMD...: CMD inside the root, with the kernel's file systems and a private /tmp; the
# mounts go when it ends.
in_root() {
	local m status=0
	for m in proc sys dev; do
		mount --rbind "/$m" "$root/$m"
		mount --make-rslave "$root/$m"
	done
	mount -t tmpfs tmpfs "$root/tmp"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@" || status=$?
	# Lazily: a process the command left (an agent started by a signing step) may still hold
	# one; nothing of the machine must stay mounted in the cache, where a removal would reach it.
	for m in tmp dev sys proc; do
		umount -R -l "$root/$m" || status=1
	done
	return $status
}

[ -d "$root" ] || make_root
case ${1:-} in
"") echo "$root" ;;
run)
	shift
	in_root "$@"
	;;
*)
	echo "usage: $0 [run CMD...]" >&2
	exit 2
	;;
esac
