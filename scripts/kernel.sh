#!/bin/bash
# Builds (once) the Rust-enabled test kernel of KERNEL_SERIES for ARCH_NAME (+ KCONFIG_VARIANT) from the
# Debian linux-source tarball and the fragments in kconfig/. The build is cached under
# ZRAM_RS_CACHE, keyed by kernel version + fragments + toolchain; a changed fragment rebuilds.
# Prints the build directory on the last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
# One build of a kernel at a time: a second caller (.ci/run builds ahead in the background)
# waits for the first and then finds it built.
mkdir -p "$ZRAM_RS_CACHE/kernel"
if debian_kernel; then
	# Debian's own kernel is installed, not built (scripts/debian-kernel.sh), under the lock.
	exec 9>"$ZRAM_RS_CACHE/kernel/.$(kernel_name).lock"
	flock 9
	exec "$here/debian-kernel.sh"
fi
out=$(kernel_dir)
exec 9>"$ZRAM_RS_CACHE/kernel/.$(basename "$out").lock"
flock 9
if [ -f "$out/.zram_rs_built" ]; then
	echo "kernel: cached build $out" >&2
	echo "$out"
	exit 0
fi
mapfile -t arch_args < <(kmake_arch_args)
mapfile -t frags < <(kernel_fragments)
echo "kernel: building $(kernel_name) ($(make -s -C "$KSRC" kernelversion)) in $out (several minutes)" >&2
start=$(date +%s)
rm -rf "$out"
mkdir -p "$out"
make -s -C "$KSRC" O="$out" "${arch_args[@]}" "${KMAKE_VARS[@]}" allnoconfig >&2
"$KSRC/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >/dev/null
make -s -C "$KSRC" O="$out" "${arch_args[@]}" "${KMAKE_VARS[@]}" olddefconfig >&2
# merge_config only warns, and Kconfig drops what it cannot satisfy: check every symbol.
bad=0
for frag in "${frags[@]}"; do
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) got=$(grep -E "^${line%%=*}=" "$out/.config" || true) ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			got=$(grep -E "^$sym=" "$out/.config" || echo "$line") ;;
		*) continue ;;
		esac
		if [ "$got" != "$line" ]; then
			echo "kernel: config mismatch in $(basename "$frag"): want '$line', got '${got:-unset}'" >&2
			bad=1
		fi
	done <"$frag"
done
[ $bad = 0 ] || exit 1
if [ "$KERNEL_PREPARED_ONLY" = 0 ]; then
	make -s -C "$KSRC" O="$out" "${arch_args[@]}" "${KMAKE_VARS[@]}" -j"$JOBS" >&2
	make -s -C "$KSRC" O="$out" "${arch_args[@]}" "${KMAKE_VARS[@]}" \
		INSTALL_MOD_PATH="$out/modroot" INSTALL_MOD_STRIP=1 modules_install >/dev/null
else
	make -s -C "$KSRC" O="$out" "${arch_args[@]}" "${KMAKE_VARS[@]}" -j"$JOBS" modules_prepare >&2
fi
touch "$out/.zram_rs_built"
# Builds of older fragments or toolchains are not used again.
prefix="$(kernel_name)-"
for old in "$ZRAM_RS_CACHE/kernel/$prefix"*; do
	rest=${old##*/$prefix}
	if [[ $rest =~ ^[0-9a-f]{16}$ ]] && [ "$old" != "$out" ]; then
		rm -rf "$old" "$ZRAM_RS_CACHE/module/${old##*/}" "$ZRAM_RS_CACHE/kernel/.${old##*/}.lock"
	fi
done
echo "kernel: built in $(($(date +%s) - start)) s" >&2
echo "$out"
