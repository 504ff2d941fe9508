#!/bin/bash
# usage: dkms-check.sh KERNEL_DIR OUT_KO
# The package as a user installs it (make check, x86_64): `make deb`; `apt install` of the
# .deb on this machine (its postinst adds zram_rs to DKMS and builds it for the machine's own
# kernels where it can); DKMS building zram_rs.ko from the installed sources against the test
# kernel in KERNEL_DIR, with the Rust compiler named in /etc/default/zram-rs-dkms, copied to
# OUT_KO for the VM suite; its modinfo; the modprobe configuration; the kernels DKMS skips (a
# series zram_rs does not support, a kernel without Rust), an autoinstall for one of them, and
# the one line for a wrong compiler; then `apt purge`, which leaves nothing behind. Prints one
# "check: ok - NAME" or "check: FAILED - NAME" line per case. Needs root; refuses to run where
# zram-rs-dkms is installed already (it would be replaced, then purged).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
kdir=$1 ko_out=$2
log=$(mktemp) scratch=$(mktemp -d)
defaults=/etc/default/zram-rs-dkms installed=0 wrote_defaults=0
# A mark that the package on the machine is this test's (for a run that could not purge it),
# and the machine's own /etc/default/zram-rs-dkms kept aside while the test's is there.
mark=/var/tmp/zram-rs-dkms-check.installed kept=/var/tmp/zram-rs-dkms-check.defaults
restore_defaults() {
	rm -f "$defaults"
	[ ! -e "$kept" ] || mv "$kept" "$defaults"
}
cleanup() {
	[ "$installed" = 0 ] || { apt-get purge -y -q zram-rs-dkms >>"$log" 2>&1 && rm -f "$mark"; }
	[ "$wrote_defaults" = 0 ] || restore_defaults
	rm -rf "$scratch" "$log"
}
trap cleanup EXIT
# record NAME STATUS: one case; on failure, the log of the steps so far.
record() {
	if [ "$2" = 0 ]; then
		echo "check: ok - $1"
	else
		echo "check: FAILED - $1"
		sed 's/^/dkms-check: /' "$log"
	fi
	: >"$log"
}

# (what a run killed before its cleanup left)
if [ -e "$mark" ]; then
	apt-get purge -y -q zram-rs-dkms >/dev/null 2>&1 && rm -f "$mark"
	restore_defaults
fi
if dpkg-query -W -f '${Status}' zram-rs-dkms 2>/dev/null | grep -q 'install ok'; then
	echo "zram-rs-dkms is installed on this machine: the test installs and purges it itself" >"$log"
	record "the package test can install zram-rs-dkms (apt remove zram-rs-dkms first)" 1
	exit 0
fi

deb=$("$here/deb.sh" 2>>"$log" | tail -n 1)
[ -n "$deb" ] && [ -s "$deb" ]
record "make deb builds the zram-rs-dkms package" $?
version=$(dpkg-deb -f "$deb" Version 2>>"$log")
kver=$(cat "$kdir/include/config/kernel.release")

# The compiler the test kernel was built with, where a user names it for DKMS's builds (this
# machine's own file kept aside meanwhile), before the installation, whose postinst builds.
touch "$mark"
if [ -e "$defaults" ]; then cp -p "$defaults" "$kept" || exit 1; fi
wrote_defaults=1
echo "RUSTC=\"$RUSTC_PINNED\"" >"$defaults"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb" >>"$log" 2>&1 &&
	dkms status -m zram_rs -v "$version" 2>>"$log" | tee -a "$log" | grep -q "^zram_rs/$version"
record "apt install of the package adds zram_rs/$version to DKMS" $?
[ -f "/usr/src/zram_rs-$version/dkms.conf" ] && [ -f "/usr/src/zram_rs-$version/Kbuild" ]
record "its sources are in /usr/src/zram_rs-$version" $?
cmp "/usr/share/zram-rs-dkms/zram_rs-as-zram.conf" "$ZRAM_RS_TOP/modprobe/zram_rs-as-zram.conf" >>"$log" 2>&1
record "it carries the modprobe configuration (/usr/share/zram-rs-dkms/zram_rs-as-zram.conf)" $?

env -u RUSTC dkms build -m zram_rs -v "$version" -k "$kver" --kernelsourcedir "$kdir" >>"$log" 2>&1
rc=$?
ko=$(find "/var/lib/dkms/zram_rs/$version/$kver" -name zram_rs.ko 2>/dev/null | head -n 1)
[ $rc = 0 ] && [ -n "$ko" ] && cp "$ko" "$ko_out"
record "DKMS builds zram_rs.ko from the installed sources against the test kernel ($kver)" $?
[ -n "$ko" ] && [ "$(modinfo -F version "$ko")" = "$version" ] &&
	[ "$(modinfo -F parm "$ko")" = "num_devices:Number of pre-created zram devices (uint)" ]
record "the DKMS-built module names its version ($version) and describes its parameter" $?

# Kernels DKMS skips (status 77: the package's installation and kernel updates go on): another
# series, and a kernel without Rust support (its configuration without CONFIG_RUST).
dkms build -m zram_rs -v "$version" -k 6.13.2 --kernelsourcedir "$kdir" >>"$log" 2>&1
rc=$?
echo "dkms build for 6.13.2: status $rc" >>"$log"
[ $rc = 77 ]
record "DKMS skips a 6.13 kernel" $?
mkdir -p "$scratch/norust"
grep -v '^CONFIG_RUST' "$kdir/.config" >"$scratch/norust/.config"
dkms build -m zram_rs -v "$version" -k 6.12.1 --kernelsourcedir "$scratch/norust" >>"$log" 2>&1
rc=$?
echo "dkms build for a kernel without Rust: status $rc" >>"$log"
[ $rc = 77 ]
record "DKMS skips a kernel without Rust support" $?
# A kernel update to a kernel DKMS skips does not fail: zram_rs is autoinstalled only by a dkms
# whose autoinstall takes skips (3.0.11 and newer; dkms.conf), and autoinstall succeeds.
dkms_version=$(dpkg-query -W -f '${Version}' dkms)
autoinstall=$(bash -c ". /usr/src/zram_rs-$version/dkms.conf; echo \"\$AUTOINSTALL\"")
echo "dkms $dkms_version: AUTOINSTALL='$autoinstall'" >>"$log"
dkms autoinstall -k 6.13.2 --kernelsourcedir "$kdir" >>"$log" 2>&1
rc=$?
echo "dkms autoinstall for 6.13.2: status $rc" >>"$log"
if dpkg --compare-versions "$dkms_version" lt 3.0.11; then want=; else want=yes; fi
[ $rc = 0 ] && [ "$autoinstall" = "$want" ]
record "zram_rs is autoinstalled where dkms takes skips ($dkms_version: '$want'), and autoinstall for a skipped kernel succeeds" $?
# A Rust compiler other than the kernel's: the build fails with one line saying so.
printf '#!/bin/sh\necho "rustc 1.0.0 (00000000 2015-05-15)"\n' >"$scratch/rustc"
chmod +x "$scratch/rustc"
RUSTC=$scratch/rustc dkms build -m zram_rs -v "$version" -k "$kver.other" --kernelsourcedir "$kdir" >>"$log" 2>&1
rc=$?
line=$(grep '^zram_rs: not built' "/var/lib/dkms/zram_rs/$version/build/make.log" 2>/dev/null)
echo "dkms build with another rustc: status $rc, make.log: $line" >>"$log"
[ $rc != 0 ] && [ "$(echo "$line" | wc -l)" = 1 ] &&
	echo "$line" | grep -q "the kernel was built with .*, '$scratch/rustc' is rustc 1.0.0"
record "with another Rust compiler, DKMS's build fails with one line naming both" $?

apt-get purge -y -q zram-rs-dkms >>"$log" 2>&1 && installed=0 && rm -f "$mark" &&
	[ -z "$(dkms status -m zram_rs 2>>"$log")" ] && [ ! -e "/usr/src/zram_rs-$version" ] &&
	[ ! -e /var/lib/dkms/zram_rs ]
record "apt purge removes the package and every DKMS build of it" $?
echo "dkms-check: done"
