#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# usage: dkms/rust-tree.sh KERNEL_BUILD_DIR KERNEL_RELEASE RUSTC
#        dkms/rust-tree.sh --source KERNEL_BUILD_DIR KERNEL_RELEASE
# Prints a build tree for KERNEL_RELEASE that has the kernel's Rust artefacts: KERNEL_BUILD_DIR
# itself when it has them (a kernel built on this machine), else a copy of it under
# /var/lib/zram-rs-dkms/KERNEL_RELEASE with them added, made once per kernel build — the
# headers package's version and the kernel's .config: a new Debian revision of the same release
# makes them again — and removed with the kernel (/etc/kernel/postrm.d/zram-rs-dkms); one
# build of a release at a time (a lock beside it). With --source it only tells whether they
# can be had: exit 0 when the tree has them, they were made for this build already, or the
# kernel's source of the headers' version is installed; else one line saying what to install
# and exit 1 (dkms.conf skips the kernel then, until the source comes). A distribution's
# headers package carries no Rust
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
check_only=
if [ "$1" = --source ]; then
	check_only=1
	shift
fi
kdir=$1 release=$2 rustc=${3:-}
reported=
fail() {
	echo "zram_rs: not built for $release: $*" >&2
	reported=1
	exit 1
}
kdir=$(readlink -f "$kdir")
config=$kdir/.config
[ -r "$config" ] || fail "no .config in $kdir"
on() { grep -q "^$1=y" "$config"; }
# x86's kernels name their Rust target in scripts/target.json; the others use a built-in one.
target_json=
! on CONFIG_X86_64 && ! on CONFIG_X86_32 || target_json=1
if [ -e "$kdir/rust/libkernel.rmeta" ] && { [ -z "$target_json" ] || [ -e "$kdir/scripts/target.json" ]; }; then
	[ -n "$check_only" ] || echo "$kdir"
	exit 0
fi
text() { sed -n "s/^$1=\"\\(.*\\)\"\$/\\1/p" "$config"; }

# The kernel build the artefacts are made for: its headers package's version (Debian: a new
# revision keeps the release name) and its configuration.
headers_pkg=$(dpkg-query -S "$kdir/.config" 2>/dev/null | sed -n 's/:.*//p' | head -n 1)
headers_version=
[ -z "$headers_pkg" ] || headers_version=$(dpkg-query -W -f '${Version}' "$headers_pkg")
key="${headers_pkg:-no package} ${headers_version:-} $(sha256sum <"$config" | cut -d' ' -f1)"
state=/var/lib/zram-rs-dkms/$release
# One build of a release at a time: a second (dkms by hand beside an autoinstall) waits. (Not
# for --source, which only looks, as dkms.conf is read, and must not wait behind a build.)
if [ -z "$check_only" ]; then
	mkdir -p "$(dirname "$state")"
	exec 9>"$state.lock"
	flock 9
fi
if [ -e "$state/.complete" ] && [ "$(cat "$state/.zram_rs-key" 2>/dev/null)" = "$key" ]; then
	[ -n "$check_only" ] || echo "$state"
	exit 0
fi

# The source: the tarball of the kernel's series, of the kernel's version.
series=$(echo "$release" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
tarball=/usr/src/linux-source-$series.tar.xz
# Debian: the headers package and linux-source must be of the same source version.
want=$headers_version
[ -r "$tarball" ] ||
	fail "its headers have no Rust artefacts and $tarball is missing: install linux-source-$series${want:+=$want}"
if [ -n "$want" ]; then
	have=$(dpkg-query -W -f '${Version}' "linux-source-$series" 2>/dev/null || true)
	[ "$want" = "$have" ] ||
		fail "linux-source-$series is ${have:-not installed}, the kernel's headers $want: install linux-source-$series=$want"
fi
[ -z "$check_only" ] || exit 0

# The toolchain the kernel names.
want=$(text CONFIG_RUSTC_VERSION_TEXT)
[ "$("$rustc" --version)" = "$want" ] || fail "the kernel was built with $want, '$rustc' is $("$rustc" --version)"
bindgen=${BINDGEN:-bindgen}
want=$(text CONFIG_BINDGEN_VERSION_TEXT)
have=$("$bindgen" --version 2>/dev/null || true)
[ "$have" = "$want" ] || fail "the kernel was built with $want, '$bindgen' is ${have:-missing}: install it"
# The C compiler: what decides compatibility is which compiler and its major.minor (the
# configuration's CONFIG_GCC_VERSION or CONFIG_CLANG_VERSION), not its distribution's revision:
# a stable update of gcc-14 changes its --version line, not the kernel's configuration.
# (Named: gcc by the first word of CONFIG_CC_VERSION_TEXT, e.g. x86_64-linux-gnu-gcc-14; clang,
# whose text starts with its vendor, by clang-MAJOR where installed, else clang.)
want=$(text CONFIG_CC_VERSION_TEXT)
llvm=
if on CONFIG_CC_IS_CLANG; then
	version=$(sed -n 's/^CONFIG_CLANG_VERSION=//p' "$config")
	version=${version:-0}
	kind=clang
	cc=clang-$((version / 10000))
	llvm=LLVM=-$((version / 10000))
	command -v "$cc" >/dev/null || { cc=clang; llvm=LLVM=1; }
else
	version=$(sed -n 's/^CONFIG_GCC_VERSION=//p' "$config")
	version=${version:-0}
	kind=gcc
	cc=${want%% *}
fi
want_mm=$((version / 10000)).$((version / 100 % 100))
case $kind in
clang) have=$("$cc" --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\.[0-9]*\).*/\1/p' | head -n 1) ;;
gcc) have=$("$cc" -dumpfullversion 2>/dev/null | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p') ;;
esac
[ "$have" = "$want_mm" ] ||
	fail "the kernel was built with $kind $want_mm ($want), '$cc' is ${have:+$kind }${have:-missing}: install $kind $want_mm"
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
# The same configuration, but for the symbols that only record the tools' versions (a gcc
# whose patch level moved, a pahole update): any other line that differs means a tool or
# library the kernel's configuration found is missing or different here; those lines are shown.
versions='^(# )?CONFIG_[A-Z0-9_]*_VERSION(_TEXT)?[= ]'
grep -Ev "$versions" "$config" >"$work/config.kernel" || true
grep -Ev "$versions" "$out/.config" >"$work/config.here" || true
if ! diff "$work/config.kernel" "$work/config.here" >"$work/config.diff"; then
	sed -n 's/^\([<>]\) /zram_rs:   \1 /p' "$work/config.diff" | head -n 20 >&2
	fail "$tarball with the kernel's .config gives another configuration (the lines above: < the kernel's, > here)"
fi
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
[ -z "$target_json" ] || cp "$out/scripts/target.json" "$state.new/scripts/"
echo "$key" >"$state.new/.zram_rs-key"
touch "$state.new/.complete"
rm -rf "$state"
mv "$state.new" "$state"
echo "$state"
