#!/bin/bash
# Builds zram_rs.ko for ARCH_NAME against the cached test kernel (building that first if needed).
# Objects go to a copy of the sources under ZRAM_RS_CACHE (6.12 has no separate output directory
# for external modules), so the work tree stays clean and each architecture has its own objects.
# Extra arguments go to make (e.g. CLIPPY=1). Prints the path of the .ko on the last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
kdir=$("$here/kernel.sh" | tail -n 1)
# Debian's own kernel: the module is the one the package's DKMS build installed there; a build
# with make arguments (CLIPPY=1) runs in the same root of the kernel's suite, against the tree
# with the kernel's Rust artefacts that build made, by the suite's compilers (clippy added for
# it).
if debian_kernel; then
	if [ $# = 0 ]; then
		echo "$kdir/zram_rs.ko"
		exit 0
	fi
	export DEBIAN_ROOT=user-$(debian_flavour)
	root=$("$here/debian-root.sh" | tail -n 1)
	release=$(cat "$kdir/include/config/kernel.release")
	rm -rf "$root/root/zram_rs-build"
	mkdir -p "$root/root/zram_rs-build"
	cp -r "$ZRAM_RS_TOP/Kbuild" "$ZRAM_RS_TOP/src" "$root/root/zram_rs-build/"
	# shellcheck disable=SC2016 # (expanded by the root's shell)
	"$here/debian-root.sh" run sh -c '{ command -v clippy-driver >/dev/null || apt-get install -y -q rust-clippy >/dev/null; } &&
		release=$1 && shift && make -s -C "/var/lib/zram-rs-dkms/$release" M=/root/zram_rs-build "$@" modules' \
		sh "$release" "$@" >&2
	echo "$root/root/zram_rs-build/zram_rs.ko"
	exit 0
fi
mapfile -t arch_args < <(kmake_arch_args)
build=$ZRAM_RS_CACHE/module/$(basename "$kdir")
mkdir -p "$build/src"
sync_file() { cmp -s "$1" "$2" || cp "$1" "$2"; }
sync_file "$ZRAM_RS_TOP/Kbuild" "$build/Kbuild"
# Mirror src/ exactly (deleted files must disappear too), keeping build products.
(cd "$build" && find src -name '*.rs' -o -name '*.c' -o -name '*.h') | while read -r f; do
	[ -e "$ZRAM_RS_TOP/$f" ] || rm -f "$build/$f"
done
(cd "$ZRAM_RS_TOP" && find src -name '*.rs' -o -name '*.c' -o -name '*.h') | while read -r f; do
	mkdir -p "$build/$(dirname "$f")"
	sync_file "$ZRAM_RS_TOP/$f" "$build/$f"
done
# ZRAM_RS_REBUILD=1 recompiles everything, so that every warning is shown again.
[ "${ZRAM_RS_REBUILD:-0}" = 0 ] || find "$build" -name '*.o' -o -name '*.ko' | xargs -r rm -f
# Against a tree only prepared for modules there is no Module.symvers: modpost can only warn
# about the symbols it cannot resolve.
modpost_warn=()
[ "$KERNEL_PREPARED_ONLY" = 0 ] || modpost_warn=(KBUILD_MODPOST_WARN=1)
make -s -C "$kdir" M="$build" "${arch_args[@]}" "${KMAKE_VARS[@]}" "${modpost_warn[@]}" "$@" modules >&2
echo "$build/zram_rs.ko"
