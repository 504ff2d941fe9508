#!/bin/bash
# usage: initramfs.sh OUT.cpio.gz KERNEL_DIR ZRAM_RS_KO [TEST_SCRIPT...]
# Packs the VM's root filesystem: busybox, bash and the host tools the tests use (with their
# shared libraries; kmod's modprobe), the kernel's modules plus zram_rs.ko under /lib/modules
# (depmod'ed, so `modprobe zram_rs` works), the package's modprobe configuration, on x86_64 the
# zram clients (zram-generator, zramswap; scripts/clients.sh), the kselftest KTAP helpers and
# zram selftests from the kernel source, the demo, and the given test scripts (with
# tests/lib.sh); for the bench, the compression corpus (GUEST_CORPUS) and its runs of 64 KiB
# (GUEST_CORPUS_UNITS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
out=$1 kdir=$2 ko=$3
shift 3
stage=$(mktemp -d "${TMPDIR:-/tmp}/zram_rs-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,tests,guest,usr/bin,usr/sbin,usr/local/bin,usr/share/kselftest}

# The guest's user space comes from a root of its architecture: this machine's for x86_64,
# Debian's arm64 packages (scripts/arm64-userland.sh) for arm64.
case $ARCH_NAME in
x86_64) root=/ triplet=x86_64-linux-gnu interpreter=/lib64/ld-linux-x86-64.so.2 ;;
arm64) root=$("$here/arm64-userland.sh" | tail -n 1) triplet=aarch64-linux-gnu interpreter=/lib/ld-linux-aarch64.so.1 ;;
esac
# Debian's util-linux swap tools, blkid and kmod (modprobe reads /etc/modprobe.d, as on Debian)
# take the place of busybox's.
tools=(/bin/bash /sbin/mke2fs /sbin/e2fsck /usr/bin/fio /sbin/zramctl /usr/bin/cmp /usr/bin/sha256sum
	/sbin/mkswap /sbin/swapon /sbin/swapoff /sbin/blkid /sbin/blkdiscard /bin/kmod)
# GUEST_EXTRA_TOOLS: more programs from the same root (BENCH_PROFILE=1 make bench adds perf).
# shellcheck disable=SC2206
tools+=(${GUEST_EXTRA_TOOLS:-})

# The applet list comes from the host's busybox: the guest's may not run here.
cp "$root/bin/busybox" "$stage/bin/busybox"
for applet in $(/bin/busybox --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$stage/bin/$applet"
done

# copy_file PATH: ROOT/PATH into the image at PATH, following symlinks.
copy_file() {
	mkdir -p "$stage$(dirname "$1")"
	cp -L "$root$1" "$stage$1"
}
# Every shared library a tool needs, found by its ELF NEEDED entries (no need to run it).
declare -A copied_libs=()
copy_libs_of() {
	local lib dir runpath
	# RUNPATH/RPATH directories (librados finds libceph-common in .../ceph this way).
	runpath=$(readelf -d "$1" 2>/dev/null | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p' | tr ':' ' ')
	for lib in $(readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -z "${copied_libs[$lib]:-}" ] || continue
		copied_libs[$lib]=1
		for dir in $runpath /lib/$triplet /usr/lib/$triplet /lib /usr/lib; do
			if [ -e "$root$dir/$lib" ]; then
				copy_file "$dir/$lib"
				copy_libs_of "$root$dir/$lib"
				break
			fi
		done
	done
}
copy_file "$interpreter"
for tool in "${tools[@]}"; do
	cp -L "$root$tool" "$stage/usr/local/bin/$(basename "$tool")"
	copy_libs_of "$root$tool"
done
for name in modprobe rmmod insmod lsmod modinfo depmod; do
	ln -sf kmod "$stage/usr/local/bin/$name"
done
# Where Debian has it (modprobe.d's install commands name it), kmod's too, not busybox's.
ln -sf /usr/local/bin/kmod "$stage/sbin/modprobe"
mkdir -p "$stage/etc/modprobe.d"
# The package's optional modprobe configuration, where the package puts it (tests/84-modprobe.sh
# links it into /etc/modprobe.d).
mkdir -p "$stage/usr/share/zram-rs-dkms"
cp "$ZRAM_RS_TOP/modprobe/zram_rs-as-zram.conf" "$stage/usr/share/zram-rs-dkms/"

# x86_64: the zram clients from Debian (scripts/clients.sh), where their packages put them, with
# the systemd programs they call from this machine's systemd package (and every library): Debian
# 12's zram-generator and zram-tools, then Debian 13's zram-generator.
if [ "$ARCH_NAME" = x86_64 ]; then
	clients=$("$here/clients.sh" | tail -n 1)
	for file in /lib/systemd/system-generators/zram-generator /lib/systemd/system/systemd-zram-setup@.service \
		/usr/sbin/zramswap /etc/default/zramswap /etc/systemd/zram-generator.conf; do
		mkdir -p "$stage$(dirname "$file")"
		cp -a "$clients$file" "$stage$file"
	done
	cp "$clients/VERSIONS" "$stage/tests/clients-versions"
	copy_libs_of "$clients/lib/systemd/system-generators/zram-generator"
	for file in /lib/systemd/systemd-makefs /usr/bin/systemd-detect-virt; do
		copy_file "$file"
		copy_libs_of "$root$file"
	done
	dpkg-query -W -f 'Debian 12 ${Package} ${Version}\n' systemd util-linux mount kmod >>"$stage/tests/clients-versions"
	# Debian 13's zram-generator, unchanged, where Debian 13 puts it (under /usr/lib, beside
	# Debian 12's under /lib) behind its path in /usr/lib: a wrapper that runs it with the Debian
	# 13 C library it was built against (the guest's is Debian 12's), through that library's own
	# dynamic loader; the programs it runs use the guest's. systemd-makefs where it calls it.
	d13=/opt/debian13
	mkdir -p "$stage$d13/lib" "$stage/usr/lib/systemd/system-generators" "$stage/usr/lib/systemd/system"
	install -D "$clients/debian13/usr/lib/systemd/system-generators/zram-generator" \
		"$stage$d13/zram-generator"
	for lib in ld-linux-x86-64.so.2 $(readelf -d "$stage$d13/zram-generator" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		cp -L "$clients/debian13/usr/lib/x86_64-linux-gnu/$lib" "$stage$d13/lib/"
	done
	cat >"$stage/usr/lib/systemd/system-generators/zram-generator" <<WRAPPER
#!/bin/sh
exec $d13/lib/ld-linux-x86-64.so.2 --library-path $d13/lib $d13/zram-generator "\$@"
WRAPPER
	chmod 755 "$stage/usr/lib/systemd/system-generators/zram-generator"
	cp "$clients/debian13/usr/lib/systemd/system/systemd-zram-setup@.service" "$stage/usr/lib/systemd/system/"
	ln -sf /lib/systemd/systemd-makefs "$stage/usr/lib/systemd/systemd-makefs"
fi

# The project's own test programs, built static for the guest.
case $ARCH_NAME in
x86_64) cc=gcc ;;
arm64) cc=aarch64-linux-gnu-gcc ;;
esac
for tool in dioread memfill pagescan statread swapfill vecwrite; do
	$cc -static -O2 -Wall -Wextra -o "$stage/usr/local/bin/$tool" "$ZRAM_RS_TOP/tools/$tool.c"
done
if [ "$ARCH_NAME" = x86_64 ]; then
	$cc -static -O2 -Wall -Wextra -o "$stage/usr/local/bin/stosq" "$ZRAM_RS_TOP/tools/stosq.c"
fi
# Scripts that start with #!/bin/bash (the kernel's selftests do).
ln -sf /usr/local/bin/bash "$stage/bin/bash"
if [ -e "$stage/usr/local/bin/mke2fs" ]; then
	ln -sf mke2fs "$stage/usr/local/bin/mkfs.ext4"
	ln -sf mke2fs "$stage/usr/local/bin/mkfs.ext2"
fi
# mke2fs and e2fsck want these to exist.
cp "$root/etc/mke2fs.conf" "$stage/etc/mke2fs.conf"
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
echo "root:x:0:" >"$stage/etc/group"
: >"$stage/etc/fstab"

kver=$(cat "$kdir/include/config/kernel.release")
cp -a "$kdir/modroot/lib" "$stage/"
mkdir -p "$stage/lib/modules/$kver/extra"
cp "$ko" "$stage/lib/modules/$kver/extra/zram_rs.ko"
depmod -b "$stage" "$kver"
# Modules the guest's init loads at boot (a Debian kernel's disk and file system drivers, which
# the test kernels have built in; scripts/debian-kernel.sh).
[ ! -e "$kdir/boot-modules" ] || cp "$kdir/boot-modules" "$stage/etc/zram_rs-modules"

# The kernel's kselftest files for zram: a Debian kernel's from its own source
# (scripts/debian-kernel.sh), a test kernel's from the tree it was built from.
selftests=$KSRC/tools/testing/selftests
[ ! -d "$kdir/selftests" ] || selftests=$kdir/selftests
cp "$selftests/kselftest/ktap_helpers.sh" "$stage/usr/share/kselftest/"
mkdir -p "$stage/usr/share/kselftest/zram"
cp "$selftests"/zram/*.sh "$stage/usr/share/kselftest/zram/"

install -m 755 "$here/guest/init" "$stage/init"
cp "$here/guest/"*.sh "$stage/guest/" 2>/dev/null || true
cp "$ZRAM_RS_TOP/tests/lib.sh" "$stage/tests/lib.sh"
cp -r "$ZRAM_RS_TOP/tests/oracle" "$stage/tests/oracle"
# The README's install sequence after its reboot (tests/36-debian-sequence.sh): the Debian
# kernel's suite's, Debian 13's on the test kernels.
readme_sequence after >"$stage/tests/debian-after-reboot"
: >"$stage/tests/order"
for test in "$@"; do
	name=$(basename "$test")
	cp "$test" "$stage/tests/$name"
	echo "$name" >>"$stage/tests/order"
done

# GUEST_CORPUS (make bench's corpus cell): the compression corpus, built here because its first
# part is the guest's own programs and libraries, the files just packed (scripts/corpus.py);
# kept in GUEST_CORPUS and carried in /corpus.
page=4096
grep -q '^CONFIG_ARM64_16K_PAGES=y' "$kdir/.config" && page=16384
grep -q '^CONFIG_ARM64_64K_PAGES=y' "$kdir/.config" && page=65536
if [ -n "${GUEST_CORPUS:-}" ]; then
	command -v zstd >/dev/null || apt-get install -y -q zstd >&2
	rm -rf "$GUEST_CORPUS"
	/usr/bin/python3 "$here/corpus.py" "$stage" "$root" "$page" "$GUEST_CORPUS"
	cp -r "$GUEST_CORPUS" "$stage/corpus"
fi
# GUEST_CORPUS_UNITS (make bench's units cell): the same kinds sampled in runs of 64 KiB, carried
# in /corpus-units (its dictionary is left out: the cell takes none).
if [ -n "${GUEST_CORPUS_UNITS:-}" ]; then
	command -v zstd >/dev/null || apt-get install -y -q zstd >&2
	rm -rf "$GUEST_CORPUS_UNITS"
	/usr/bin/python3 "$here/corpus.py" "$stage" "$root" "$page" "$GUEST_CORPUS_UNITS" 65536
	mkdir -p "$stage/corpus-units"
	cp "$GUEST_CORPUS_UNITS"/*.img "$GUEST_CORPUS_UNITS/manifest.txt" "$stage/corpus-units/"
fi

(cd "$stage" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$out"
echo "initramfs: $out ($(du -h "$out" | cut -f1))" >&2
