#!/bin/bash
# usage: debian-kernel.sh
# Debian's own kernel for the VM suite (make check KERNEL=debian-7.3: Debian 13's 7.3 from
# trixie-backports; KERNEL=debian-unstable: the kernel Debian unstable carries when the run
# starts; KCONFIG=cloud or rt for the other flavours), set up as that suite's user sets it up:
# in a bare root of the suite in the cache (scripts/debian-root.sh, DEBIAN_ROOT=user-FLAVOUR),
# the commands of the README's install sequence for it run as written there (Debian 13's adds
# trixie-backports from the mirror this machine's apt uses instead of deb.debian.org and
# installs its kernel; unstable's installs the suite's own), then `apt install
# ./zram-rs-dkms_VERSION_all.deb` with the work tree's package (make deb), whose DKMS build
# makes zram_rs.ko for that kernel — up to the reboot; tests/36-debian-sequence.sh runs the
# rest in the VM. The kernel's series is read from the archive first (env.sh's
# debian_kernel_series): one zram_rs has no ABI for is refused before anything is installed.
# Nothing is built here but by the package. The root is made again when the package's
# dependencies, the sequence or the suite's kernel change; otherwise each run removes the package there and
# installs the new one (its DKMS build then finds the kernel's Rust artefacts made the first
# time).
# Prints, on its last line, a directory laid out as a kernel build for scripts/vm.sh and
# scripts/initramfs.sh: Debian's kernel image (arch/x86/boot/bzImage), its release and
# configuration, the modules the suite loads (Debian's files, with what they depend on),
# zram_rs.ko as DKMS installed it, the kernel's own kselftest files for zram (from its
# linux-source package, which the package's DKMS build needed) and the sequence's log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
[ "$ARCH_NAME" = x86_64 ] || {
	echo "debian-kernel: the Debian kernels tested are amd64 ones (ARCH=x86_64)" >&2
	exit 1
}
flavour=$(debian_flavour)
label=$(debian_label)
# The series the suite's kernel is now: refused here when zram_rs has no ABI for it.
series_log=$(mktemp)
if ! read -r series image < <(debian_kernel_series 2>"$series_log" || echo); [ -z "${image:-}" ]; then
	grep -v '^\(Get\|Hit\|Ign\|Fetched\|Reading\|W: \)' "$series_log" | sed 's/^/debian-kernel: /' >&2
	rm -f "$series_log"
	exit 1
fi
rm -f "$series_log"
echo "debian-kernel: $label carries $image ($series)" >&2
out=$ZRAM_RS_CACHE/kernel/$(kernel_name)
export DEBIAN_ROOT=user-$flavour
root_sh=$here/debian-root.sh

# The README's sequence up to `reboot`.
sequence=$(readme_sequence before)
[ -n "$sequence" ] || {
	echo "debian-kernel: README.md has no $label sequence ($(debian_marker))" >&2
	exit 1
}
# One user per flavour: the README names the default flavour's packages.
sequence=${sequence//linux-image-amd64/linux-image-$flavour}
sequence=${sequence//linux-headers-amd64/linux-headers-$flavour}
mirror=$(debian_mirror)
sequence=${sequence//http:\/\/deb.debian.org\/debian\//"$mirror"}
sequence=${sequence//http:\/\/deb.debian.org\/debian /"${mirror%/} "}
case ${mirror%/} in
http://deb.debian.org/debian) ;;
*)
	if grep -q 'deb\.debian\.org' <<<"$sequence"; then
		echo "debian-kernel: the README's sequence names deb.debian.org in a form not replaced by $mirror" >&2
		exit 1
	fi
	;;
esac

deb=$("$here/deb.sh" | tail -n 1)
debname=$(basename "$deb")
# The README names the package file of this version.
grep -qF "./$debname" <<<"$sequence" || {
	echo "debian-kernel: the README's sequence does not install ./$debname" >&2
	exit 1
}

# The root stays while the sequence, the package's dependencies and the suite's kernel stay the
# same.
key=$({
	echo "$image"
	echo "$sequence" | sed "s|$debname|PACKAGE|"
	dpkg-deb -f "$deb" Depends Recommends
} | sha256sum | cut -c1-16)
root=$("$root_sh" | tail -n 1)
# A root whose sequence did not end (no mark) or whose sequence differs is made again: each
# sequence runs in a root where nothing ran before.
if [ "$(cat "$root/root/.zram_rs-sequence" 2>/dev/null)" != "$key" ] && [ -e "$root/root" ] &&
	[ -n "$(ls -A "$root/root")" ]; then
	echo "debian-kernel: the sequence or the suite's kernel changed, or its last run did not end: a new $label root" >&2
	"$root_sh" remove
	root=$("$root_sh" | tail -n 1)
fi

mkdir -p "$out"
log=$out/sequence.log
# The package's contents: a run whose package is the one installed already (make check's
# kernel, module and VM steps each ask) finds everything in place.
package=$({
	dpkg-deb -f "$deb"
	dpkg-deb --fsys-tarfile "$deb" | tar -t
	dpkg-deb --fsys-tarfile "$deb" | tar -xO
} | sha256sum | cut -c1-16)
if [ -e "$root/root/.zram_rs-sequence" ] && [ -e "$out/zram_rs.ko" ] &&
	[ "$(cat "$out/package" 2>/dev/null)" = "$package" ]; then
	echo "$out"
	exit 0
fi
rm -f "$out/package"
cp "$deb" "$root/root/$debname"
if [ -e "$root/root/.zram_rs-sequence" ]; then
	# The sequence ran here before: only the package is new.
	echo "debian-kernel: replacing zram-rs-dkms in the $label root ($flavour)" >&2
	steps="dpkg -r zram-rs-dkms >/dev/null; cd /root && apt-get install -y ./$debname"
else
	echo "debian-kernel: the README's $label sequence in a new root ($flavour; several minutes, once)" >&2
	steps="set -ex; cd /root; $sequence"
fi
if ! "$root_sh" run sh -c "$steps" >"$log" 2>&1; then
	tail -n 40 "$log" | sed 's/^/debian-kernel: /' >&2
	echo "debian-kernel: the sequence failed (log: $log)" >&2
	exit 1
fi
echo "$key" >"$root/root/.zram_rs-sequence"

# The kernel the sequence installed (the newest of the flavour) and what DKMS made for it.
release=$(cd "$root/lib/modules" && ls -d [0-9]*-"$flavour" 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$release" ] || {
	echo "debian-kernel: the sequence installed no $flavour kernel (log: $log)" >&2
	exit 1
}
[ "linux-image-$release" = "$image" ] || {
	echo "debian-kernel: the sequence installed linux-image-$release, the suite carries $image (log: $log)" >&2
	exit 1
}
ko=$(find "$root/lib/modules/$release/updates" -name 'zram_rs.ko*' 2>/dev/null | head -n 1 || true)
[ -n "$ko" ] || {
	tail -n 40 "$log" | sed 's/^/debian-kernel: /' >&2
	echo "debian-kernel: DKMS installed no zram_rs.ko for $release (log: $log)" >&2
	exit 1
}
rm -rf "$out/arch" "$out/include" "$out/modroot"
mkdir -p "$out/arch/x86/boot" "$out/include/config"
cp "$root/boot/vmlinuz-$release" "$out/arch/x86/boot/bzImage"
echo "$release" >"$out/include/config/kernel.release"
cp "$root/boot/config-$release" "$out/.config"
case $ko in
*.xz) xz -dc "$ko" >"$out/zram_rs.ko" ;;
*.zst) zstd -qdc "$ko" >"$out/zram_rs.ko" ;;
*) cp "$ko" "$out/zram_rs.ko" ;;
esac
# The modules the suite loads where Debian builds them as modules (C zram, virtio disks, loop
# devices, ext4; zram_rs's own dependencies), with theirs; the guest's init loads those listed
# in /etc/zram_rs-modules at boot, as a Debian system's initramfs and udev would.
wanted=(zram virtio_pci virtio_blk loop ext4 lz4hc_compress)
mods=$out/modroot/lib/modules/$release
mkdir -p "$mods"
"$root_sh" run modprobe -a -S "$release" --show-depends "${wanted[@]}" >"$out/modules" || {
	echo "debian-kernel: $release has no ${wanted[*]} (modprobe --show-depends)" >&2
	exit 1
}
awk '$1 == "insmod" { print $2 }' "$out/modules" | sort -u | while read -r file; do
	mkdir -p "$mods/$(dirname "${file#/lib/modules/$release/}")"
	cp "$root$file" "$mods/${file#/lib/modules/$release/}"
done
for f in modules.builtin modules.builtin.modinfo modules.order; do
	cp "$root/lib/modules/$release/$f" "$mods/"
done
printf '%s\n' virtio_pci virtio_blk loop ext4 >"$out/boot-modules"
# The kernel's own kselftest files for zram (tests/90-kselftest.sh), from the source package the
# DKMS build took the kernel's Rust artefacts from.
tarball=$root/usr/src/linux-source-$series.tar.xz
rm -rf "$out/selftests" "$out/selftests.new"
mkdir -p "$out/selftests.new"
tar -C "$out/selftests.new" -xJf "$tarball" --strip-components=4 --wildcards \
	"linux-source-$series/tools/testing/selftests/zram/*" \
	"linux-source-$series/tools/testing/selftests/kselftest/ktap_helpers.sh" || {
	echo "debian-kernel: no zram selftests in $tarball" >&2
	exit 1
}
mv "$out/selftests.new" "$out/selftests"
echo "$package" >"$out/package"
echo "debian-kernel: $release, zram_rs.ko from DKMS ($(basename "$ko"))" >&2
echo "$out"
