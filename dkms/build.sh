#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# usage: dkms/build.sh KERNEL_BUILD_DIR KERNEL_RELEASE
# DKMS's build command for zram_rs (dkms.conf): checks that the kernel can take the module —
# built with Rust support (CONFIG_RUST=y), of a supported series (6.12, or 7.2 and newer; DKMS
# itself skips other kernels, dkms.conf) — and that the toolchain is the kernel's, and says so
# in one line if not, then builds zram_rs.ko with the kernel's own choices: LLVM when the
# kernel was built with clang (the versioned tools, e.g. clang-19, when installed), and the
# Rust compiler named by RUSTC: from the environment, else from /etc/default/zram-rs-dkms
# (read by every DKMS build of zram_rs: DKMS's hooks pass no environment), else `rustc` on
# PATH. Its version must be the kernel's. BINDGEN (for headers without Rust artefacts,
# dkms/rust-tree.sh) is found the same way, else `bindgen` on PATH.
set -eu
kdir=$1 release=$2
fail() {
	echo "zram_rs: not built for $release: $*" >&2
	exit 1
}
config=$kdir/include/config/auto.conf
[ -r "$config" ] || fail "no kernel build tree at $kdir (install the kernel's headers)"
grep -q '^CONFIG_RUST=y' "$config" ||
	fail "the kernel has no Rust support (CONFIG_RUST=y); C zram.ko stays the zram driver"
series=$(echo "$release" | sed -n 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
[ -n "$series" ] || fail "cannot tell the kernel series from '$release'"
set -- $series
if ! { [ "$1" -eq 6 ] && [ "$2" -eq 12 ]; } && ! [ $(($1 * 256 + $2)) -ge $((7 * 256 + 2)) ]; then
	fail "zram_rs supports 6.12 and 7.2 or newer, not $1.$2"
fi
# setting NAME: NAME from the environment, else from /etc/default/zram-rs-dkms (empty if neither).
setting() {
	eval "value=\${$1:-}"
	if [ -z "$value" ] && [ -r /etc/default/zram-rs-dkms ]; then
		value=$(unset "$1"; . /etc/default/zram-rs-dkms >/dev/null; eval "printf %s \"\${$1:-}\"")
	fi
	printf %s "$value"
}
rustc=$(setting RUSTC)
rustc=${rustc:-rustc}
BINDGEN=$(setting BINDGEN)
BINDGEN=${BINDGEN:-bindgen}
export BINDGEN
command -v "$rustc" >/dev/null ||
	fail "no Rust compiler '$rustc' (set RUSTC in /etc/default/zram-rs-dkms to the kernel's)"
want=$(sed -n 's/^CONFIG_RUSTC_VERSION_TEXT="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$config")
have=$("$rustc" --version)
[ -z "$want" ] || [ "$want" = "$have" ] ||
	fail "the kernel was built with $want, '$rustc' is $have (set RUSTC in /etc/default/zram-rs-dkms to the kernel's compiler)"
llvm=
if grep -q '^CONFIG_CC_IS_CLANG=y' "$config"; then
	major=$(sed -n 's/^CONFIG_CLANG_VERSION=\([0-9]*\)$/\1/p' "$config")
	major=$((major / 10000))
	if command -v "clang-$major" >/dev/null && command -v "ld.lld-$major" >/dev/null; then
		llvm=LLVM=-$major
	elif command -v clang >/dev/null && command -v ld.lld >/dev/null; then
		llvm=LLVM=1
	else
		fail "the kernel was built with clang $major: install clang-$major and lld-$major"
	fi
fi
# A build tree with the kernel's Rust artefacts (made from the kernel's source where its headers
# lack them: dkms/rust-tree.sh).
kdir=$(sh "$(dirname "$0")/rust-tree.sh" "$kdir" "$release" "$rustc")
# Every build starts from the sources alone: what an earlier build left here (DKMS builds in the
# package's directory, whose files the package leaves alone) would otherwise look newer than
# sources whose times the package set to its changelog's date, and make would keep objects
# of the older code.
find . \( -name '*.o' -o -name '*.cmd' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
	-o -name '*.s' -o -name c_layout.rs -o -name modules.order -o -name Module.symvers \) \
	-type f -delete
# (The kernel's make must not see a make of DKMS's.)
unset MAKEFLAGS MFLAGS MAKELEVEL
exec make -C "$kdir" M="$(pwd)" $llvm RUSTC="$rustc" modules
