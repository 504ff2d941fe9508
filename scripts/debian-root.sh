#!/bin/bash
# usage: debian-root.sh                 make (once) and print the root's directory
#        debian-root.sh path            print it, made or not
#        debian-root.sh run CMD [ARG...] run CMD inside it (/proc, /sys, /dev and /tmp mounted)
#        debian-root.sh remove           remove it
# A Debian root in the cache: made with mmdebstrap from the mirror this machine's apt uses (its
# own sources are left alone). DEBIAN_ROOT picks which: "toolchain" (the default), Debian 13
# (trixie and trixie-backports in its sources) with Debian 13's toolchain (rustc and rust-src
# 1.85.1, bindgen 0.71.1, gcc-14: what Debian built its 7.3 kernels with), dkms and what
# building a kernel's Rust artefacts needs; or "user-NAME", apt's minimal system of the Debian
# kernel's suite (env.sh's debian_suite: trixie, or unstable for KERNEL=debian-unstable) and
# nothing else, as that suite's user's machine before anything is installed
# (scripts/debian-kernel.sh installs a kernel and the package there; unstable's Release file
# is taken past its Valid-Until date, debian_valid_until). Kept under a key of its name and
# package list; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"

DEBIAN_ROOT=${DEBIAN_ROOT:-toolchain}
case $DEBIAN_ROOT in
toolchain)
	packages=(
		apt ca-certificates dkms build-essential gcc-14 rustc rust-src bindgen libclang-19-dev
		flex bison bc libelf-dev libssl-dev dwarves kmod cpio python3 openssl xz-utils
	)
	key=$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-12)
	root=$ZRAM_RS_CACHE/debian/trixie-$key
	suites=(trixie trixie-backports)
	aptopts=()
	;;
user-*)
	# (trixie-backports is the user's to add; apt answers its questions with yes, as a user
	# would)
	packages=(apt ca-certificates)
	suite=$(debian_suite)
	root=$ZRAM_RS_CACHE/debian/$suite-$DEBIAN_ROOT
	suites=("$suite")
	aptopts=(--aptopt='APT::Get::Assume-Yes "true"')
	[ "$(debian_valid_until "$suite")" = true ] ||
		aptopts+=(--aptopt='Acquire::Check-Valid-Until "false"')
	;;
*)
	echo "debian-root: DEBIAN_ROOT is toolchain or user-NAME, not $DEBIAN_ROOT" >&2
	exit 2
	;;
esac

if [ "${1:-}" = path ]; then
	echo "$root"
	exit 0
fi
# One user of a root at a time (make check's steps and a build ahead in the background).
mkdir -p "$(dirname "$root")"
exec 8>"$root.lock"
flock 8

make_root() {
	command -v mmdebstrap >/dev/null || {
		echo "debian-root: installing mmdebstrap" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >&2
	}
	local mirror keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	mirror=$(debian_mirror)
	mirror=${mirror%/}
	local sources=() suite
	for suite in "${suites[@]}"; do
		sources+=("deb [signed-by=$keyring] $mirror $suite main")
	done
	rm -rf "$root.new"
	mkdir -p "$(dirname "$root")"
	echo "debian-root: making a ${suites[0]} root from $mirror (a few minutes, once)" >&2
	mmdebstrap --mode=root --variant=apt "${aptopts[@]}" --include="$(
		IFS=,
		echo "${packages[*]}"
	)" "${suites[0]}" "$root.new" "${sources[@]}" >&2
	mv "$root.new" "$root"
}

# in_root CMD...: CMD inside the root, with the kernel's file systems and a private /tmp; the
# mounts go when it ends.
in_root() {
	local m status=0
	# Nothing of the machine may stay mounted in the cache, however this ends.
	trap 'for m in tmp dev sys proc; do umount -R -l "$root/$m" 2>/dev/null; done' EXIT INT TERM
	for m in proc sys dev; do
		mount --rbind "/$m" "$root/$m"
		mount --make-rslave "$root/$m"
	done
	mount -t tmpfs tmpfs "$root/tmp"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@" 8>&- || status=$?
	# Lazily: a process the command left (an agent started by a signing step) may still hold
	# one; nothing of the machine must stay mounted in the cache, where a removal would reach it.
	for m in tmp dev sys proc; do
		umount -R -l "$root/$m" || status=1
	done
	trap - EXIT INT TERM
	return $status
}

case ${1:-} in
remove)
	# Never with something of the machine still mounted inside (under the lock, so nothing
	# mounts meanwhile), and never across a file system boundary.
	real=$(realpath -m "$root")
	if awk -v a="$real/" -v b="$real.new/" '{ gsub(/\\040/, " ", $2); if (index($2 "/", a) == 1 || index($2 "/", b) == 1) found = 1 }
		END { exit !found }' /proc/self/mounts; then
		echo "debian-root: $root has mounts, not removed" >&2
		exit 1
	fi
	rm -rf --one-file-system "$root" "$root.new"
	exit 0
	;;
esac
[ -d "$root" ] || make_root
case ${1:-} in
"") echo "$root" ;;
run)
	shift
	in_root "$@"
	;;
*)
	echo "usage: $0 [run CMD... | remove]" >&2
	exit 2
	;;
esac
