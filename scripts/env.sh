# Sourced by every script: where things live and the variables every kernel make needs.
# The kernel's make must not inherit flags or variables from a make that called us.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
# Everything built (kernel trees, bindgen, initramfs) lives under ZRAM_RS_CACHE, outside the repo.
export ZRAM_RS_CACHE=${ZRAM_RS_CACHE:-${HOME:-/root}/.cache/zram_rs}
export KSRC_TARBALL=${KSRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
export KSRC=${KSRC:-$ZRAM_RS_CACHE/src/linux-source-6.12}
export BINDGEN_VERSION=0.69.5
export BINDGEN=${BINDGEN:-$ZRAM_RS_CACHE/tools/bin/bindgen}
export LIBCLANG_PATH=/usr/lib/llvm-19/lib
export RUSTC_PINNED=/usr/bin/rustc
# Passed on every kernel make command line (the kernel Makefile overrides RUSTC from the environment).
KMAKE_VARS=(LLVM=-19 RUSTC=$RUSTC_PINNED RUSTDOC=/usr/bin/rustdoc CLIPPY_DRIVER=/usr/bin/clippy-driver BINDGEN=$BINDGEN)
export JOBS=${JOBS:-3}

# Architecture of the guest: x86_64 (default) or arm64.
export ARCH_NAME=${ARCH_NAME:-x86_64}
# Kernel config variant: "" for the normal test kernel, or a fragment name under kconfig/ (e.g. debug).
export KCONFIG_VARIANT=${KCONFIG_VARIANT:-}
ZRAM_RS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ZRAM_RS_TOP

kmake_arch_args() {
	case $ARCH_NAME in
	x86_64) ;;
	arm64) echo ARCH=arm64 ;;
	*) echo "unknown ARCH_NAME=$ARCH_NAME (x86_64 or arm64)" >&2; return 1 ;;
	esac
}

# The fragments that make up the kernel config, in merge order.
kernel_fragments() {
	echo "$ZRAM_RS_TOP/kconfig/base.config"
	echo "$ZRAM_RS_TOP/kconfig/$ARCH_NAME.config"
	[ -z "$KCONFIG_VARIANT" ] || echo "$ZRAM_RS_TOP/kconfig/$KCONFIG_VARIANT.config"
}

# Cache key of a kernel build: source version, fragments and every tool that shapes the result.
kernel_key() {
	{
		echo "$ARCH_NAME $KCONFIG_VARIANT"
		make -s -C "$KSRC" kernelversion
		kernel_fragments | xargs cat
		"$RUSTC_PINNED" --version
		clang-19 --version | head -1
		"$BINDGEN" --version
	} | sha256sum | cut -c1-16
}

# Directory of the kernel build (O=) for the current ARCH_NAME/KCONFIG_VARIANT.
kernel_dir() {
	echo "$ZRAM_RS_CACHE/kernel/$ARCH_NAME${KCONFIG_VARIANT:+-$KCONFIG_VARIANT}-$(kernel_key)"
}
