#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# usage: dkms/rust-tree.sh KERNEL_BUILD_DIR KERNEL_RELEASE RUSTC
# Prints a build tree for KERNEL_RELEASE that has the kernel's Rust artefacts: KERNEL_BUILD_DIR
# itself when it has them (a kernel built on this machine), else a copy of it under
# /var/lib/zram-rs-dkms/KERNEL_RELEASE with them added, made once per kernel and removed with it
# (/etc/kernel/postrm.d/zram-rs-dkms). A distribution's headers package carries no Rust
# artefacts (Debian's have no rust/*.rmeta, no proc-macro libraries, no scripts/target.json),
# and an out-of-tree Rust module cannot be built without them. They are made again here from
# the same version of the kernel's source (/usr/src/linux-source-SERIES.tar.xz, Debian's
# linux-source-SERIES package) with the kernel's own configuration and release, by the exact
# Rust compiler, bindgen and C compiler the kernel names (CONFIG_RUSTC_VERSION_TEXT,
# CONFIG_BINDGEN_VERSION_TEXT, CONFIG_CC_VERSION_TEXT): the same compiler on the same
# configuration gives the same crate hashes, so the module's references resolve in the kernel.
# Anything missing or different gets one line on standard error and exit status 1, and nothing
# half-made is left.
set -eu
kdir=$1 release=$2 rustc=$3
reported=
fail() {
	echo "zram_rs: not built for $release: $*" >&2
	reported=1
	exit 1
}
if [ -e "$kdir/rust/libkernel.rmeta" ] && [ -e "$kdir/scripts/target.json" ]; then
	echo "$kdir"
	exit 0
fi
state=/var/lib/zram-rs-dkms/$release
if [ -e "$state/.complete" ]; then
	echo "$state"
	exit 0
fi
kdir=$(readlink -f "$kdir")
config=$kdir/.config
[ -r "$config" ] || fail "no .config in $kdir"
text() { sed -n "s/^$1=\"\\(.*\\)\"\$/\\1/p" "$config"; }

# The source: the tarball of the kernel's series, of the kernel's version.
series=$(echo "$release" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
tarball=/usr/src/linux-source-$series.tar.xz
# Debian: the headers package and linux-source must be of the same source version.
headers_pkg=$(dpkg-query -S "$kdir/.config" 2>/dev/null | sed -n 's/:.*//p' | head -n 1)
want=
[ -z "$headers_pkg" ] || want=$(dpkg-query -W -f '${Version}' "$headers_pkg")
[ -r "$tarball" ] ||
	fail "its headers have no Rust artefacts and $tarball is missing: install linux-source-$series${want:+=$want}"
if [ -n "$want" ]; then
	have=$(dpkg-query -W -f '${Version}' "linux-source-$series" 2>/dev/null || true)
	[ "$want" = "$have" ] ||
		fail "linux-source-$series is ${have:-not installed}, the kernel's headers $want: install linux-source-$series=$want"
fi

# The toolchain the kernel names.
want=$(text CONFIG_RUSTC_VERSION_TEXT)
[ "$("$rustc" --version)" = "$want" ] || fail "the kernel was built with $want, '$rustc' is $("$rustc" --version)"
bindgen=${BINDGEN:-bindgen}
want=$(text CONFIG_BINDGEN_VERSION_TEXT)
have=$("$bindgen" --version 2>/dev/null || true)
[ "$have" = "$want" ] || fail "the kernel was built with $want, '$bindgen' is ${have:-missing}: install it"
want=$(text CONFIG_CC_VERSION_TEXT)
cc=${want%% *}
have=$("$cc" --version 2>/dev/null | head -n 1 || true)
[ "$have" = "$want" ] || fail "the kernel was built with $want, '$cc' is ${have:-missing}: install it"
llvm=
if grep -q '^CONFIG_CC_IS_CLANG=y' "$config"; then
	llvm=LLVM=1
fi
# What building the kernel's Rust crates and tools takes, each named by the package that has it
# (a development package of the version its library has on this machine: a kernel from
# trixie-backports brings backports' libelf, which trixie's libelf-dev does not match).
need() {
	local pkg=$2 lib
	if [ -n "${3:-}" ] && lib=$(dpkg-query -W -f '${Version}' "$3" 2>/dev/null) && [ -n "$lib" ]; then
		pkg="$pkg=$lib"
	fi
	fail "making its Rust artefacts needs $1: install $pkg"
}
for tool in make:make flex:flex bison:bison bc:bc xz:xz-utils; do
	command -v "${tool%%:*}" >/dev/null || need "${tool%%:*}" "${tool#*:}"
done
on() { grep -q "^$1=y" "$config"; }
sysroot=$("$rustc" --print sysroot)
[ -e "$sysroot/lib/rustlib/src/rust/library/core/src/lib.rs" ] || need "the Rust standard library's source" rust-src
! on CONFIG_OBJTOOL || [ -e /usr/include/gelf.h ] || need "libelf's headers (gelf.h)" libelf-dev libelf1t64
! on CONFIG_MODULE_SIG || [ -e /usr/include/openssl/opensslv.h ] || need "OpenSSL's headers" libssl-dev
! on CONFIG_MODULE_SIG || command -v openssl >/dev/null || need openssl openssl
! on CONFIG_DEBUG_INFO_BTF || command -v pahole >/dev/null || need pahole dwarves
arch=$(sed -n 's/^override ARCH = //p' "$kdir/.kernelvariables" 2>/dev/null || true)
[ -n "$arch" ] || arch=$(uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/')

# Room: the source unpacked and its Rust crates built take about 2.5 GB for a moment.
work_parent=${TMPDIR:-/var/tmp}
free_kb=$(df -Pk "$work_parent" | awk 'NR == 2 { print $4 }')
[ "$free_kb" -ge $((3 << 20)) ] ||
	fail "preparing its Rust artefacts needs 3 GB free in $work_parent, there are $((free_kb >> 10)) MB"

work=$(mktemp -d "$work_parent/zram-rs-kernel.XXXXXX")
cleanup() {
	status=$?
	rm -rf "$work" "$state.new"
	if [ "$status" != 0 ] && [ -z "$reported" ]; then
		echo "zram_rs: not built for $release: preparing its Rust artefacts failed (above)" >&2
	fi
}
trap cleanup EXIT
tar -C "$work" -xf "$tarball"
src=$work/linux-source-$series
out=$work/out
mkdir "$out"
cp "$config" "$out/.config"
# Debian's make variables of the kernel's build (its cross-compiler prefix among them), which
# Debian's kernel Makefile reads from the build tree.
[ ! -e "$kdir/.kernelvariables" ] || cp "$kdir/.kernelvariables" "$out/"
kmake() {
	make -s -C "$src" O="$out" ARCH="$arch" CC="$cc" $llvm RUSTC="$rustc" BINDGEN="$bindgen" \
		KERNELRELEASE="$release" "$@"
}
# (Not a make of DKMS's.)
unset MAKEFLAGS MFLAGS MAKELEVEL
echo "zram_rs: preparing the Rust artefacts of $release from $tarball (once per kernel)" >&2
kmake olddefconfig >&2
cmp -s "$config" "$out/.config" ||
	fail "$tarball with the kernel's .config gives another configuration (a missing tool?)"
kmake -j"$(nproc)" modules_prepare >&2

# The copy: the headers' build tree (small), its make file pointed at the copy, the crates and
# procedural macros, the Rust target, and the Rust sources whose features Kbuild probes.
rm -rf "$state.new"
mkdir -p "$(dirname "$state")"
cp -a "$kdir/." "$state.new/"
# Relative links (Debian's scripts/ and tools/, into linux-kbuild) made absolute for the copy.
for f in "$kdir"/* "$kdir"/.[!.]*; do
	[ -L "$f" ] || continue
	ln -sfn "$(readlink -f "$f")" "$state.new/${f##*/}"
done
sed -i "s|^KBUILD_OUTPUT=.*|KBUILD_OUTPUT=$state|" "$state.new/Makefile"
mkdir -p "$state.new/rust"
cp "$out"/rust/*.rmeta "$out"/rust/*.so "$state.new/rust/"
(cd "$src" && find rust -name '*.rs' -exec cp --parents -t "$state.new" {} +)
if [ -L "$state.new/scripts" ]; then
	scripts=$(readlink -f "$state.new/scripts")
	rm "$state.new/scripts"
	mkdir "$state.new/scripts"
	for f in "$scripts"/* "$scripts"/.[!.]*; do
		[ ! -e "$f" ] || ln -s "$f" "$state.new/scripts/"
	done
fi
cp "$out/scripts/target.json" "$state.new/scripts/"
touch "$state.new/.complete"
rm -rf "$state"
mv "$state.new" "$state"
echo "$state"
