#!/bin/bash
# usage: initramfs.sh OUT.cpio.gz KERNEL_DIR ZRAM_RS_KO [TEST_SCRIPT...]
# Packs the VM's root filesystem: busybox, bash and the host tools the tests use (with their
# shared libraries), the kernel's modules plus zram_rs.ko under /lib/modules (depmod'ed, so
# `modprobe zram_rs` works), the kselftest KTAP helpers and zram selftests from the kernel
# source, the demo, and the given test scripts (with tests/lib.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
out=$1 kdir=$2 ko=$3
shift 3
stage=$(mktemp -d "${TMPDIR:-/tmp}/zram_rs-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,tests,guest,usr/bin,usr/sbin,usr/local/bin,usr/share/kselftest}

case $ARCH_NAME in
x86_64)
	busybox=/bin/busybox
	host_tools=(/bin/bash /sbin/mke2fs /sbin/e2fsck /usr/bin/fio /sbin/zramctl /usr/bin/cmp /usr/bin/sha256sum)
	;;
arm64)
	busybox=$ZRAM_RS_CACHE/arm64-userland/bin/busybox
	host_tools=()
	;;
esac
cp "$busybox" "$stage/bin/busybox"
for applet in $("$stage/bin/busybox" --list 2>/dev/null || /bin/busybox --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$stage/bin/$applet"
done

# Host tools and every shared library they load, at the same paths.
copy_with_libs() {
	local tool=$1
	cp -L "$tool" "$stage/usr/local/bin/$(basename "$tool")"
	ldd "$tool" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
		[ -n "$lib" ] && [ -e "$lib" ] || continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
}
for tool in "${host_tools[@]}"; do
	copy_with_libs "$tool"
done
if [ -e "$stage/usr/local/bin/mke2fs" ]; then
	ln -sf mke2fs "$stage/usr/local/bin/mkfs.ext4"
	ln -sf mke2fs "$stage/usr/local/bin/mkfs.ext2"
fi
# mke2fs and e2fsck want these to exist.
cp /etc/mke2fs.conf "$stage/etc/mke2fs.conf"
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
echo "root:x:0:" >"$stage/etc/group"
: >"$stage/etc/fstab"

kver=$(cat "$kdir/include/config/kernel.release")
cp -a "$kdir/modroot/lib" "$stage/"
mkdir -p "$stage/lib/modules/$kver/extra"
cp "$ko" "$stage/lib/modules/$kver/extra/zram_rs.ko"
depmod -b "$stage" "$kver"

cp "$KSRC/tools/testing/selftests/kselftest/ktap_helpers.sh" "$stage/usr/share/kselftest/"
mkdir -p "$stage/usr/share/kselftest/zram"
cp "$KSRC"/tools/testing/selftests/zram/*.sh "$stage/usr/share/kselftest/zram/"

install -m 755 "$here/guest/init" "$stage/init"
cp "$here/guest/"*.sh "$stage/guest/" 2>/dev/null || true
cp "$ZRAM_RS_TOP/tests/lib.sh" "$stage/tests/lib.sh"
: >"$stage/tests/order"
for test in "$@"; do
	name=$(basename "$test")
	cp "$test" "$stage/tests/$name"
	echo "$name" >>"$stage/tests/order"
done

(cd "$stage" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$out"
echo "initramfs: $out ($(du -h "$out" | cut -f1))" >&2
