# Sourced by every script: where things live and the variables every kernel make needs.
# The kernel's make must not inherit flags or variables from a make that called us.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
# Everything built (kernel trees, bindgen, initramfs) lives under ZRAM_RS_CACHE, outside the repo.
export ZRAM_RS_CACHE=${ZRAM_RS_CACHE:-${HOME:-/root}/.cache/zram_rs}
# Kernel series built against: 6.12 (Debian's linux-source-6.12, bookworm-backports) or 7.3
# (linux-source-7.3, trixie-backports: downloaded into the cache, nothing installed); or
# Debian's own kernels, not built here but installed as a Debian user installs them, with
# zram_rs from the package's DKMS build (scripts/debian-kernel.sh; KCONFIG_VARIANT picks the
# flavour: debian_flavour): debian-7.3, Debian 13's 7.3 from trixie-backports, and
# debian-unstable, whatever kernel Debian unstable carries when the run starts (its series read
# from the archive then, and refused unless src/abi/ has it: debian_kernel_series).
export KERNEL_SERIES=${KERNEL_SERIES:-6.12}
case $KERNEL_SERIES in
6.12) export KSRC_TARBALL=${KSRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz} ;;
7.3 | debian-7.3 | debian-unstable) export KSRC_TARBALL=${KSRC_TARBALL:-$ZRAM_RS_CACHE/src/linux-source-7.3.tar.xz} ;;
*)
	echo "unknown KERNEL=$KERNEL_SERIES (6.12, 7.3, debian-7.3 or debian-unstable)" >&2
	return 1 2>/dev/null || exit 1
	;;
esac
# The source tree of the series; for a Debian kernel 7.3's, whose rustfmt configuration the
# source checks use (the guest's kselftest files come from the Debian kernel's own source:
# scripts/debian-kernel.sh).
case $KERNEL_SERIES in
debian-*) export KSRC_SERIES=7.3 ;;
*) export KSRC_SERIES=$KERNEL_SERIES ;;
esac
export KSRC=${KSRC:-$ZRAM_RS_CACHE/src/linux-source-$KSRC_SERIES}
# One bindgen for both series: 7.3's scripts/min-tool-version.sh asks for 0.71.1, and 6.12
# (0.65.1 or newer) names the Rust version bindgen is to generate for (`--rust-target`), so
# a newer bindgen serves it too: built once, not twice, on a fresh machine.
export BINDGEN_VERSION=0.71.1
export BINDGEN_ROOT=$ZRAM_RS_CACHE/tools-bindgen-$BINDGEN_VERSION
export BINDGEN=${BINDGEN:-$BINDGEN_ROOT/bin/bindgen}
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
	echo "$ZRAM_RS_TOP/kconfig/$KERNEL_SERIES.config"
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

# KERNEL_PREPARED_ONLY=1: the kernel tree is only prepared for building modules (`make
# modules_prepare`: configuration, generated headers, the Rust crates), no vmlinux: enough to
# compile and link zram_rs.ko (modpost cannot resolve its symbols then), not to boot.
export KERNEL_PREPARED_ONLY=${KERNEL_PREPARED_ONLY:-0}

# debian_kernel: KERNEL_SERIES is one of Debian's own kernels (debian-7.3, debian-unstable).
debian_kernel() {
	case $KERNEL_SERIES in
	debian-*) return 0 ;;
	*) return 1 ;;
	esac
}

# debian_suite: the Debian suite whose user the Debian kernel's root is (debian-root.sh),
# debian_label its name in messages and debian_marker the README line before its install
# sequence (readme_sequence). Debian 13's for every other kernel (the test kernels' guests run
# the Debian 13 sequence's lines after its reboot, tests/36-debian-sequence.sh).
debian_suite() {
	case $KERNEL_SERIES in
	debian-unstable) echo unstable ;;
	*) echo trixie ;;
	esac
}
debian_label() {
	case $KERNEL_SERIES in
	debian-unstable) echo "Debian unstable" ;;
	*) echo "Debian 13" ;;
	esac
}
debian_marker() {
	case $KERNEL_SERIES in
	debian-unstable) echo "<!-- debian-unstable-sequence -->" ;;
	*) echo "<!-- debian-13-sequence -->" ;;
	esac
}

# debian_flavour: the flavour of Debian's kernel package for KCONFIG_VARIANT: amd64 (none),
# cloud-amd64 (cloud) or rt-amd64 (rt, PREEMPT_RT).
debian_flavour() {
	case $KCONFIG_VARIANT in
	"") echo amd64 ;;
	cloud | rt) echo "$KCONFIG_VARIANT-amd64" ;;
	*)
		echo "KERNEL=$KERNEL_SERIES takes KCONFIG= (amd64), cloud or rt, not $KCONFIG_VARIANT" >&2
		return 1
		;;
	esac
}

# known_series: the kernel series whose C zram ABI zram_rs has (src/abi/vMAJOR_MINOR.rs), one
# per line.
known_series() {
	local f
	for f in "$ZRAM_RS_TOP"/src/abi/v[0-9]*_[0-9]*.rs; do
		f=${f##*/v}
		f=${f%.rs}
		echo "${f/_/.}"
	done | sort -V
}

# Name of the current kernel build: ARCH_NAME, KCONFIG_VARIANT, but for 6.12 the series, and
# "-prepared" for a tree only prepared for modules; for Debian's kernel, KERNEL-FLAVOUR
# (debian-7.3-amd64, debian-unstable-amd64).
kernel_name() {
	local series= prepared=
	if debian_kernel; then
		echo "$KERNEL_SERIES-$(debian_flavour)"
		return
	fi
	[ "$KERNEL_SERIES" = 6.12 ] || series=-$KERNEL_SERIES
	[ "$KERNEL_PREPARED_ONLY" = 0 ] || prepared=-prepared
	echo "$ARCH_NAME${KCONFIG_VARIANT:+-$KCONFIG_VARIANT}$series$prepared"
}

# Directory of the kernel build (O=) for the current ARCH_NAME/KCONFIG_VARIANT/KERNEL_SERIES.
kernel_dir() {
	echo "$ZRAM_RS_CACHE/kernel/$(kernel_name)-$(kernel_key)"
}

# qemu_upstream_version: the upstream version of the installed QEMU (Debian's version without
# epoch and revision), which names make bench's plugin build in the cache.
qemu_upstream_version() {
	local version
	version=$(qemu-system-x86_64 --version 2>/dev/null | sed -n 's/.*(Debian \(.*\)).*/\1/p' | head -n 1)
	version=${version#*:}
	echo "${version%-*}"
}

# debian_mirror: the Debian mirror apt's own configuration uses for bookworm (its URI, with
# the trailing slash), never a host written into a script.
debian_mirror() {
	local mirror
	mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Codename: bookworm' | sort -u | head -n 1)
	if [ -z "$mirror" ]; then
		apt-get update -q >&2
		mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Codename: bookworm' | sort -u | head -n 1)
	fi
	[ -n "$mirror" ] || {
		echo "debian_mirror: apt has no source for bookworm to take the mirror from" >&2
		return 1
	}
	echo "${mirror%/}/"
}

# debian_valid_until SUITE: apt's Acquire::Check-Valid-Until for SUITE's Release file:
# unstable's is taken past its Valid-Until date (a mirror may be a snapshot that no longer
# moves), the others' are not.
debian_valid_until() {
	if [ "$1" = unstable ]; then echo false; else echo true; fi
}

# debian_apt SUITE: sets debian_apt_opts, the options of apt-get and apt-cache for another
# Debian suite (trixie, trixie-backports, unstable) from the mirror this machine's apt uses for
# bookworm, checked against Debian's archive keyring, and updates its lists; apt's state for it
# is kept in the cache, so the machine's sources and lists are left alone.
debian_apt() {
	local suite=$1 apt_dir mirror
	apt_dir=$ZRAM_RS_CACHE/apt/$suite
	mirror=$(debian_mirror) || return
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} $suite main" \
		>"$apt_dir/sources.list"
	debian_apt_opts=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
		-o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" -o APT::Get::List-Cleanup=0
		-o Acquire::Check-Valid-Until="$(debian_valid_until "$suite")" -q)
	apt-get "${debian_apt_opts[@]}" update >&2
}

# debian_download SUITE DEST PACKAGE...: downloads PACKAGEs of SUITE into DEST (debian_apt).
debian_download() {
	local suite=$1 dest=$2
	shift 2
	debian_apt "$suite" || return
	mkdir -p "$dest"
	(cd "$dest" && apt-get "${debian_apt_opts[@]}" download "$@" >&2)
}

# debian_kernel_series: "SERIES PACKAGE": the series (MAJOR.MINOR) and package of the kernel
# that the Debian kernel's suite installs for linux-image-FLAVOUR now, read from the archive
# (the metapackage's dependency on linux-image-VERSION-FLAVOUR); fails, naming it, when zram_rs
# has no ABI for that series (known_series).
debian_kernel_series() {
	local suite series image
	case $KERNEL_SERIES in
	debian-7.3) suite=trixie-backports ;;
	*) suite=$(debian_suite) ;;
	esac
	debian_apt "$suite" || return
	image=$(apt-cache "${debian_apt_opts[@]}" show --no-all-versions "linux-image-$(debian_flavour)" |
		sed -n 's/^Depends:.*\(linux-image-[0-9][0-9.]*[^ ,]*\).*/\1/p' | head -n 1)
	series=$(echo "$image" | sed -n 's/^linux-image-\([0-9]*\.[0-9]*\)\..*/\1/p')
	if [ -z "$series" ]; then
		echo "$(debian_label): $suite has no linux-image-$(debian_flavour) that names its kernel" >&2
		return 1
	fi
	if ! known_series | grep -qxF "$series"; then
		echo "$(debian_label) carries $image: zram_rs knows the series $(known_series | paste -sd' '), not $series" >&2
		return 1
	fi
	echo "$series $image"
}

# readme_sequence before|after: the README's install sequence of the Debian kernel's suite (the
# shell block after the line debian_marker names), its lines before `reboot`
# (scripts/debian-kernel.sh runs them in a root of that suite) or after it
# (tests/36-debian-sequence.sh runs them in the VM).
readme_sequence() {
	awk -v part="$1" -v marker="$(debian_marker)" '$0 == marker { marked = 1; next }
		marked && /^```sh$/ { inblock = 1; next }
		inblock && /^```$/ { exit }
		inblock && /^reboot/ { rebooted = 1; next }
		inblock && (part == "after") == (rebooted == 1) { print }' "$ZRAM_RS_TOP/README.md"
}
