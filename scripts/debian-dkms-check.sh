#!/bin/bash
# usage: debian-dkms-check.sh KERNEL_DIR
# The package's DKMS path as a Debian user meets it, in the Debian root where the README's
# sequence installed Debian's kernel and the package (make check KERNEL=debian-7.3 or
# debian-unstable, after scripts/debian-kernel.sh; KERNEL_DIR is its output): the module DKMS built carries DKMS's
# signature (Secure Boot); one build of a release at a time; the Rust artefacts made for
# another build of the same release (a new Debian revision, another .config) are not reused;
# BINDGEN from /etc/default/zram-rs-dkms; and a kernel upgrade in either order: the source
# before the headers (their DKMS hook builds zram_rs), or the headers before the source (their
# hook skips zram_rs with one line and succeeds, and the source's arrival builds it: the
# package's trigger). Each case ends with the root as it found it. Prints one "check: ok -
# NAME" or "check: FAILED - NAME" line per case.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
kdir=$1
export DEBIAN_ROOT=user-$(debian_flavour)
root=$("$here/debian-root.sh" path)
release=$(cat "$kdir/include/config/kernel.release")
# The kernel's series, whose linux-source package the DKMS build takes the Rust artefacts from.
series=$(echo "$release" | cut -d. -f1,2)
label=$(debian_label)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# in_root SCRIPT: SCRIPT run by sh in the root, with RELEASE and SERIES set; its output to the
# log.
in_root() {
	"$here/debian-root.sh" run env RELEASE="$release" SERIES="$series" sh -c "set -u; $1" >>"$log" 2>&1
}
record() {
	if [ "$2" = 0 ]; then
		echo "check: ok - $1"
	else
		echo "check: FAILED - $1"
		sed 's/^/debian-dkms-check: /' "$log"
	fi
	: >"$log"
}
# The steps below share these (evaluated in the root).
common='state=/var/lib/zram-rs-dkms/$RELEASE; build=/lib/modules/$RELEASE/build;
	version=$(dpkg-query -W -f "\${Version}" zram-rs-dkms | sed "s/-[^-]*\$//"); src=/usr/src/zram_rs-$version;
	ko=$(find /lib/modules/$RELEASE/updates -name "zram_rs.ko*" | head -n 1);
	installed() { dkms status -m zram_rs -v "$version" -k "$RELEASE" | grep -q ": installed"; }'

# Secure Boot: DKMS signs what it builds with its machine owner key; modinfo names the signer,
# and the key is the certificate's (its serial number).
in_root "$common"'
	signer=$(modinfo -F signer "$ko"); echo "signer: $signer"
	sig_key=$(modinfo -F sig_key "$ko" | tr -d ":" | tr A-F a-f); echo "sig_key: $sig_key"
	serial=$(openssl x509 -inform DER -in /var/lib/dkms/mok.pub -noout -serial 2>/dev/null ||
		openssl x509 -in /var/lib/dkms/mok.pub -noout -serial)
	serial=$(echo "${serial#serial=}" | tr A-F a-f | sed "s/^0*//"); echo "mok.pub serial: $serial"
	[ "$signer" = "DKMS module signing key" ] && [ -n "$serial" ] && [ "$(echo "$sig_key" | sed "s/^0*//")" = "$serial" ]'
record "$label: the module DKMS built is signed with DKMS's machine owner key (modinfo -F signer: DKMS module signing key, its sig_key mok.pub's serial)" $?

# The module DKMS installed is built from this tree's code, not kept from an earlier build of
# the same version: the name of every attribute that src/attrs.rs lists on every kernel is in
# it (read from the host).
missing=
ko=$(find "$root/lib/modules/$release/updates" -name 'zram_rs.ko*' 2>/dev/null | head -n 1)
plain=$(mktemp)
case $ko in
'') missing=" (no module)" ;;
*.xz) xz -dc "$ko" >"$plain" || missing=" (not xz)" ;;
*) cp "$ko" "$plain" ;;
esac
for name in $(awk '
	/Some\(AttrPtr::of\(&[A-Z_]+\)\)/ { match($0, /&[A-Z_]+/); always[substr($0, RSTART + 1, RLENGTH - 1)] = 1 }
	/^static [A-Z_]+: DeviceAttribute/ { match($0, /static [A-Z_]+/); current = substr($0, RSTART + 7, RLENGTH - 7) }
	current != "" && /c"[a-z_]+"/ { match($0, /c"[a-z_]+"/); name[current] = substr($0, RSTART + 2, RLENGTH - 3); current = "" }
	END { for (s in always) if (s in name) print name[s] }' "$ZRAM_RS_TOP/src/attrs.rs"); do
	[ -z "$missing" ] || [ "${missing# (}" = "$missing" ] || break
	grep -qaF "$name" "$plain" || missing="$missing $name"
done
rm -f "$plain"
[ -z "$missing" ]
rc=$?
[ $rc = 0 ] || echo "the module ${ko:-(none)} lacks:$missing" >"$log"
record "$label: the module DKMS built is this tree's code (the name of every attribute src/attrs.rs always lists is in it)" $rc

# One build of a release at a time: while the release's lock is held, rust-tree.sh waits.
in_root "$common"'
	flock "$state.lock" sleep 8 & sleep 1
	timeout 4 sh "$src/dkms/rust-tree.sh" "$build" "$RELEASE" rustc; rc=$?; wait
	echo "rust-tree.sh under a held lock: exit $rc"; [ $rc = 124 ] &&
	[ "$(sh "$src/dkms/rust-tree.sh" "$build" "$RELEASE" rustc)" = "$state" ]'
record "$label: a second build of the release waits for the first's lock, then takes the tree it made" $?

# A new build of the same release (another revision of the headers package, or another
# .config): the tree made for the old one is not taken. The source hidden, rust-tree.sh
# --source tells: the tree made for this build serves, one made for another does not.
in_root "$common"'
	mv /usr/src/linux-source-$SERIES.tar.xz /usr/src/linux-source-$SERIES.tar.xz.hidden
	cp "$state/.zram_rs-key" /tmp/key
	sh "$src/dkms/rust-tree.sh" --source "$build" "$RELEASE"; same=$?
	echo "linux-headers-$RELEASE 0:another-revision $(sha256sum <$build/.config | cut -d" " -f1)" >"$state/.zram_rs-key"
	sh "$src/dkms/rust-tree.sh" --source "$build" "$RELEASE"; revision=$?
	echo "$(cut -d" " -f1,2 /tmp/key) 0000" >"$state/.zram_rs-key"
	sh "$src/dkms/rust-tree.sh" --source "$build" "$RELEASE"; config=$?
	cp /tmp/key "$state/.zram_rs-key"
	mv /usr/src/linux-source-$SERIES.tar.xz.hidden /usr/src/linux-source-$SERIES.tar.xz
	echo "same build: $same, another revision: $revision, another .config: $config"
	[ $same = 0 ] && [ $revision = 1 ] && [ $config = 1 ]'
record "$label: Rust artefacts made for another revision of the headers or another .config of the same release are made again, not reused" $?

# BINDGEN from /etc/default/zram-rs-dkms (DKMS's hooks pass no environment): with the tree's
# key stale, the build reaches the tool checks and names the bindgen set there.
in_root "$common"'
	cp "$state/.zram_rs-key" /tmp/key
	echo stale >"$state/.zram_rs-key"
	echo BINDGEN=/opt/no-such/bindgen >/etc/default/zram-rs-dkms
	(cd "$src" && sh dkms/build.sh "$build" "$RELEASE") 2>/tmp/out; rc=$?
	rm -f /etc/default/zram-rs-dkms; cp /tmp/key "$state/.zram_rs-key"
	cat /tmp/out; [ $rc != 0 ] && grep -q "/opt/no-such/bindgen" /tmp/out'
record "$label: BINDGEN is read from /etc/default/zram-rs-dkms" $?

# The usual kernel upgrade: the source is there when the headers come; their DKMS hook (what
# linux-headers' postinst runs) builds and installs zram_rs for the release.
in_root "$common"'
	dkms uninstall -m zram_rs -v "$version" -k "$RELEASE" >/dev/null 2>&1 || true
	dkms unbuild -m zram_rs -v "$version" -k "$RELEASE" >/dev/null
	! installed && /etc/kernel/header_postinst.d/dkms "$RELEASE" && installed'
record "$label: source before headers: the headers' DKMS hook builds and installs zram_rs" $?

# A kernel upgrade whose headers come before the kernel's source: zram_rs unbuilt for the
# release (still added to DKMS) and its Rust artefacts set aside (as for a new release), linux-source-SERIES removed;
# the headers' DKMS hook (what linux-headers' postinst runs) succeeds, skipping zram_rs with
# one line naming the package to install; then the source's package is installed and its
# trigger builds and installs zram_rs (with the artefacts put back: nothing is made again).
in_root "$common"'
	set -e
	cd /root
	have=$(dpkg-query -W -f "\${Version}" linux-source-$SERIES)
	[ -e linux-source-${SERIES}_*.deb ] || apt-get download -q "linux-source-$SERIES=$have" >/dev/null
	dkms uninstall -m zram_rs -v "$version" -k "$RELEASE" >/dev/null 2>&1 || true
	dkms unbuild -m zram_rs -v "$version" -k "$RELEASE" >/dev/null
	dkms status -m zram_rs -v "$version" | grep -q . # (still added, as for a new kernel)
	mv "$state" "$state.aside"
	dpkg -r linux-source-$SERIES >/dev/null
	rc=0; /etc/kernel/header_postinst.d/dkms "$RELEASE" >/tmp/out 2>&1 || rc=$?
	cat /tmp/out; echo "headers hook: exit $rc"
	[ $rc = 0 ] && grep -q "^zram_rs: not built for $RELEASE: .*install linux-source-$SERIES=$have\$" /tmp/out && ! installed
	mv "$state.aside" "$state"
	dpkg -i linux-source-${SERIES}_*.deb 2>&1 | tail -n 5
	installed && dkms status -m zram_rs -k "$RELEASE"'
rc=$?
# (never leave the root without its source, its artefacts or the module)
in_root "$common"'
	[ -e /usr/src/linux-source-$SERIES.tar.xz ] || dpkg -i /root/linux-source-${SERIES}_*.deb
	[ ! -e "$state.aside" ] || { rm -rf "$state"; mv "$state.aside" "$state"; }
	installed || dkms install -m zram_rs -v "$version" -k "$RELEASE"' >/dev/null 2>&1
record "$label: headers before the kernel's source: the headers' DKMS hook succeeds with one line naming linux-source-$series, and the source's arrival builds zram_rs" $rc
