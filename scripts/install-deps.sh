#!/bin/bash
# Installs everything the build and the VM tests need on a Debian 12 (bookworm) machine.
# Idempotent: packages already present and a bindgen of the right version are left alone.
# Needs root (apt-get). Honours ZRAM_RS_CACHE (default ~/.cache/zram_rs) for bindgen.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"

packages=(
	linux-source-6.12 rustc-web rust-web-src rust-web-clippy
	clang-19 lld-19 llvm-19 libclang-19-dev
	make bc flex bison libelf-dev libssl-dev xz-utils cpio kmod binutils
	busybox-static fio e2fsprogs util-linux mount diffutils coreutils systemd
	gcc libc6-dev gcc-aarch64-linux-gnu libc6-dev-arm64-cross valgrind dkms
)
backports_packages=(qemu-system-x86 qemu-system-arm)

missing=()
for p in "${packages[@]}" "${backports_packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	list=/etc/apt/sources.list.d/bookworm-backports.list
	if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		echo "deb $(debian_mirror) bookworm-backports main" >"$list"
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${packages[@]}"
	apt-get install -y -q --no-install-recommends -t bookworm-backports "${backports_packages[@]}"
else
	echo "install-deps: all packages present"
fi

if ! "$BINDGEN" --version 2>/dev/null | grep -q "bindgen $BINDGEN_VERSION"; then
	echo "install-deps: installing bindgen-cli $BINDGEN_VERSION from crates.io"
	LIBCLANG_PATH=$LIBCLANG_PATH cargo install --locked bindgen-cli --version "$BINDGEN_VERSION" \
		--root "$BINDGEN_ROOT"
fi
"$BINDGEN" --version
# Older caches' bindgen 0.69.5, 6.12's before both series shared one, is not used any more.
rm -rf "$ZRAM_RS_CACHE/tools"

# 7.3's source comes from trixie-backports (scripts/env.sh: debian_download); its tarball is
# taken out of the package.
if [ ! -d "$KSRC" ] && [ ! -f "$KSRC_TARBALL" ] && [ "$KSRC_SERIES" = 7.3 ]; then
	echo "install-deps: downloading linux-source-7.3 from trixie-backports"
	download=$(mktemp -d)
	debian_download trixie-backports "$download" linux-source-7.3
	dpkg-deb -x "$download"/linux-source-7.3_*.deb "$download/x"
	mkdir -p "$(dirname "$KSRC_TARBALL")"
	mv "$download/x/usr/src/linux-source-7.3.tar.xz" "$KSRC_TARBALL"
	rm -rf "$download"
fi
if [ ! -d "$KSRC" ]; then
	echo "install-deps: unpacking $KSRC_TARBALL"
	mkdir -p "$(dirname "$KSRC")"
	tar -C "$(dirname "$KSRC")" -xf "$KSRC_TARBALL"
fi
echo "install-deps: kernel source $KSRC ($(make -s -C "$KSRC" kernelversion))"
