#!/bin/bash
# Builds zram_rs.ko for ARCH_NAME against the cached test kernel (building that first if needed).
# Objects go to a copy of the sources under ZRAM_RS_CACHE (6.12 has no separate output directory
# for external modules), so the work tree stays clean and each architecture has its own objects.
# Extra arguments go to make (e.g. CLIPPY=1). Prints the path of the .ko on the last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
kdir=$("$here/kernel.sh" | tail -n 1)
mapfile -t arch_args < <(kmake_arch_args)
build=$ZRAM_RS_CACHE/module/$(basename "$kdir")
mkdir -p "$build/src"
sync_file() { cmp -s "$1" "$2" || cp "$1" "$2"; }
sync_file "$ZRAM_RS_TOP/Kbuild" "$build/Kbuild"
# Mirror src/ exactly (deleted files must disappear too), keeping build products.
for f in "$build"/src/*.rs "$build"/src/*.c; do
	[ -e "$f" ] || continue
	[ -e "$ZRAM_RS_TOP/src/$(basename "$f")" ] || rm -f "$f"
done
for f in "$ZRAM_RS_TOP"/src/*.rs "$ZRAM_RS_TOP"/src/*.c; do
	sync_file "$f" "$build/src/$(basename "$f")"
done
# ZRAM_RS_REBUILD=1 recompiles everything, so that every warning is shown again.
[ "${ZRAM_RS_REBUILD:-0}" = 0 ] || rm -f "$build"/src/*.o "$build"/*.o "$build"/*.ko
make -s -C "$kdir" M="$build" "${arch_args[@]}" "${KMAKE_VARS[@]}" "$@" modules >&2
echo "$build/zram_rs.ko"
