#!/bin/bash
# usage: debian-kernel.sh
# Debian 13's own 7.3 kernel for the VM suite (make check KERNEL=debian-7.3; KCONFIG=cloud or rt
# for the other flavours), set up as a Debian 13 user sets it up: in a bare Debian 13 root in
# the cache (scripts/debian-root.sh, DEBIAN_ROOT=user-FLAVOUR), the commands of the README's
# Debian 13 section run as written there — trixie-backports added (from the mirror this
# machine's apt uses instead of deb.debian.org), `apt install -t trixie-backports
# linux-image-FLAVOUR linux-headers-FLAVOUR`, then `apt install ./zram-rs-dkms_VERSION_all.deb`
# with the work tree's package (make deb), whose DKMS build makes zram_rs.ko for that kernel —
# up to the reboot; tests/36-debian-sequence.sh runs the rest in the VM. Nothing is built here but by
# the package. The root is made again when the package's dependencies or the sequence change;
# otherwise each run removes the package there and installs the new one (its DKMS build then
# finds the kernel's Rust artefacts made the first time).
# Prints, on its last line, a directory laid out as a kernel build for scripts/vm.sh and
# scripts/initramfs.sh: Debian's kernel image (arch/x86/boot/bzImage), its release and
# configuration, the modules the suite loads (Debian's files, with what they depend on),
# zram_rs.ko as DKMS installed it, and the sequence's log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
[ "$ARCH_NAME" = x86_64 ] || {
	echo "debian-kernel: Debian's 7.3 kernels are amd64 ones (ARCH=x86_64)" >&2
	exit 1
}
flavour=$(debian_flavour)
out=$ZRAM_RS_CACHE/kernel/$(kernel_name)
export DEBIAN_ROOT=user-$flavour
root_sh=$here/debian-root.sh

# The README's sequence up to `reboot`.
sequence=$(readme_sequence before)
[ -n "$sequence" ] || {
	echo "debian-kernel: README.md has no Debian 13 sequence (<!-- debian-13-sequence -->)" >&2
	exit 1
}
# One Debian 13 user per flavour: the README names the default flavour's packages.
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

# The root stays while the sequence and the package's dependencies stay the same.
key=$({
	echo "$sequence" | sed "s|$debname|PACKAGE|"
	dpkg-deb -f "$deb" Depends Recommends
} | sha256sum | cut -c1-16)
root=$("$root_sh" | tail -n 1)
# A root whose sequence did not end (no mark) or whose sequence differs is made again: each
# sequence runs in a root where nothing ran before.
if [ "$(cat "$root/root/.zram_rs-sequence" 2>/dev/null)" != "$key" ] && [ -e "$root/root" ] &&
	[ -n "$(ls -A "$root/root")" ]; then
	echo "debian-kernel: the sequence changed, or its last run did not end: a new Debian 13 root" >&2
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
	echo "debian-kernel: replacing zram-rs-dkms in the Debian 13 root ($flavour)" >&2
	steps="dpkg -r zram-rs-dkms >/dev/null; cd /root && apt-get install -y ./$debname"
else
	echo "debian-kernel: the README's Debian 13 sequence in a new root ($flavour; several minutes, once)" >&2
	steps="set -ex; cd /root; $sequence"
fi
if ! "$root_sh" run sh -c "$steps" >"$log" 2>&1; then
	tail -n 40 "$log" | sed 's/^/debian-kernel: /' >&2
	echo "debian-kernel: the sequence failed (log: $log)" >&2
	exit 1
fi
echo "$key" >"$root/root/.zram_rs-sequence"

# The kernel the sequence installed (the newest of the flavour) and what DKMS made for it.
release=$(cd "$root/lib/modules" && ls -d 7.*-"$flavour" 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$release" ] || {
	echo "debian-kernel: the sequence installed no $flavour kernel (log: $log)" >&2
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
echo "$package" >"$out/package"
echo "debian-kernel: $release, zram_rs.ko from DKMS ($(basename "$ko"))" >&2
echo "$out"
