#!/bin/bash
# Runs every test: the host crate's `cargo test`, the source checks (rustfmt, a warning-free
# module build with the kernel's Rust lints and clippy), then the VM suite (tests/[0-9]*.sh, or
# TESTS). Ends with the line "N passed, N failed" and exits non-zero on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
passed=0 failed=0 skipped=0
# timed NAME SINCE: prints how long a phase took ("time: NAME SECONDS"), for .ci/run's table.
timed() {
	echo "time: $1 $(($(date +%s) - $2))"
}

# counted: echoes its input, counting its "check: ok - ..." and "check: FAILED - ..." lines
# (run in this shell: `counted < <(...)`).
counted() {
	local line
	while read -r line; do
		echo "$line"
		case $line in
		"check: ok - "*) passed=$((passed + 1)) ;;
		"check: FAILED - "*) failed=$((failed + 1)) ;;
		esac
	done
}

# record NAME STATUS: one source check as a test case.
record() {
	if [ "$2" = 0 ]; then
		echo "check: ok - $1"
		passed=$((passed + 1))
	else
		echo "check: FAILED - $1"
		failed=$((failed + 1))
	fi
}

# The cache keeps only what this tree uses (scripts/cache.sh): every run ends with a prune.
prune_cache() {
	echo "== cache"
	"$here/cache.sh" prune 2>&1
	echo "cache: $(du -sh "$ZRAM_RS_CACHE" | cut -f1) in $ZRAM_RS_CACHE (make cache lists it)"
}

echo "== host: cargo test (pure logic)"
phase=$(date +%s)
host_log=$(mktemp)
(cd "$ZRAM_RS_TOP" && cargo test --quiet 2>&1) | tee "$host_log"
host_rc=${PIPESTATUS[0]}
read -r host_passed host_failed < <(awk '/^test result:/ { p += $4; f += $6 } END { print p + 0, f + 0 }' "$host_log")
rm -f "$host_log"
passed=$((passed + host_passed))
failed=$((failed + host_failed))
if [ "$host_rc" != 0 ] && [ "$host_failed" = 0 ]; then
	record "cargo test builds and runs" 1
fi
timed host-tests "$phase"

echo "== source checks"
phase=$(date +%s)
rustfmt --check --edition 2021 --config-path "$KSRC/.rustfmt.toml" "$ZRAM_RS_TOP"/src/*.rs "$ZRAM_RS_TOP"/src/*/*.rs \
	"$ZRAM_RS_TOP"/host/src/*.rs "$ZRAM_RS_TOP"/host/tests/*.rs "$ZRAM_RS_TOP"/host/benches/*.rs
record "rustfmt --check" $?
# The kernel first, on its own (built once, then cached): its own compiler warnings (a few
# frame-size ones, more under KASAN) are not the module's, which the build below is judged by.
kdir=$("$here/kernel.sh" | tail -n 1)
rc=$?
if debian_kernel; then
	record "$(debian_label)'s $(debian_flavour) kernel and zram_rs from the package's DKMS build: the README's sequence" $rc
else
	record "the test kernel builds" $rc
fi
timed kernel-build-or-wait "$phase"
phase=$(date +%s)
build_log=$(mktemp)
# A kernel whose C zram offers lz4, lz4hc, zstd and deflate only (as Debian's: no lzo, no
# lib/842) and none of its optional parts (Debian's lack only recompression): the other
# backends and those parts are left out (Kbuild's zram_rs_* cfgs), with no warning, and the
# module needs none of the missing libraries' symbols. (x86_64's normal kernels; the build
# below rebuilds everything.)
if [ "$ARCH_NAME" = x86_64 ] && [ -z "$KCONFIG_VARIANT" ] && [ "$KERNEL_PREPARED_ONLY" = 0 ] &&
	! debian_kernel; then
	ZRAM_RS_REBUILD=1 "$here/module.sh" CLIPPY=1 CONFIG_ZRAM_BACKEND_LZO= CONFIG_ZRAM_BACKEND_842= \
		CONFIG_ZRAM_MULTI_COMP= CONFIG_ZRAM_WRITEBACK= CONFIG_ZRAM_MEMORY_TRACKING= \
		CONFIG_ZRAM_TRACK_ENTRY_ACTIME= >"$build_log" 2>&1
	rc=$?
	ko=$(tail -n 1 "$build_log")
	if [ $rc = 0 ] && grep -qiE 'warning:|error' "$build_log"; then rc=1; fi
	if [ $rc = 0 ] && nm -u "$ko" | grep -E 'lzo|842'; then rc=1; fi
	[ $rc = 0 ] || cat "$build_log"
	record "zram_rs.ko builds for a C zram without lzo, 842 and its optional parts (CLIPPY=1, no warning, no lzo or 842 symbol)" $rc
fi
ZRAM_RS_REBUILD=1 "$here/module.sh" CLIPPY=1 >"$build_log" 2>&1
rc=$?
# Any diagnostic fails: rustc/clippy ("warning: ..."), clang on the C shim
# ("src/kapi/shim.c:N:M: warning: ..."), modpost ("WARNING: modpost: ..."), and any error; against a
# tree only prepared for modules, but modpost's unresolved symbols and missing Module.symvers.
if [ "$KERNEL_PREPARED_ONLY" != 0 ]; then
	sed -i -E -e "/^WARNING: modpost: .*: symbol '.*' undefined!$/d" \
		-e '/^WARNING: modpost: suppressed [0-9]+ unresolved symbol warnings/d' \
		-e '/^WARNING: .*\/Module\.symvers is missing\.$/,/You can set KBUILD_MODPOST_WARN=1/d' "$build_log"
fi
if [ $rc = 0 ] && grep -qiE 'warning:|error' "$build_log"; then rc=1; fi
[ $rc = 0 ] || cat "$build_log"
record "zram_rs.ko builds with CLIPPY=1 and no warning" $rc
rm -f "$build_log"
timed module-build "$phase"
counted < <("$here/cache-check.sh" 2>&1)
if debian_kernel; then
	# The package's DKMS path in the Debian root: signature, lock, keys, BINDGEN, upgrade order.
	phase=$(date +%s)
	counted < <("$here/debian-dkms-check.sh" "$kdir" 2>&1)
	timed debian-dkms "$phase"
else
	# DKMS's build takes a kernel tree that has its Rust artefacts as it is (on arm64 there is
	# no scripts/target.json: only x86 names its Rust target in one).
	[ "$(sh "$ZRAM_RS_TOP/dkms/rust-tree.sh" "$kdir" "$(cat "$kdir/include/config/kernel.release")" rustc 2>&1)" = \
		"$(readlink -f "$kdir")" ]
	record "dkms/rust-tree.sh takes the test kernel's own build tree, which has its Rust artefacts" $?
fi

# The package (x86_64 runs of the normal test kernels; it is the same for every architecture),
# installed on this machine and purged again (scripts/dkms-check.sh): the VM suite below then
# boots the module DKMS built from it. (Debian's kernel: the README's sequence installed the
# package, and the suite boots what its DKMS build made.)
dkms_ko=
if [ "$ARCH_NAME" = x86_64 ] && [ -z "$KCONFIG_VARIANT" ] && [ "$KERNEL_PREPARED_ONLY" = 0 ] &&
	! debian_kernel; then
	echo "== package (DKMS)"
	phase=$(date +%s)
	dkms_ko=$(mktemp --suffix=.ko)
	counted < <("$here/dkms-check.sh" "$kdir" "$dkms_ko" 2>&1 | tee "$dkms_ko.log")
	grep -q '^dkms-check: done$' "$dkms_ko.log"
	record "the package checks ran to the end" $?
	rm -f "$dkms_ko.log"
	[ -s "$dkms_ko" ] || { rm -f "$dkms_ko"; dkms_ko=; }
	timed package "$phase"
fi

if [ "$KERNEL_PREPARED_ONLY" != 0 ]; then
	# Nothing to boot: the source checks are the whole run.
	prune_cache
	echo
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
fi

echo "== VM tests ($ARCH_NAME)"
if [ -n "${TESTS:-}" ]; then
	read -ra tests <<<"$TESTS"
else
	tests=("$ZRAM_RS_TOP"/tests/[0-9]*.sh)
fi
vm_log=$(mktemp)
phase=$(date +%s)
# (the DKMS-built module when the package checks made one; vm.sh builds the work tree's otherwise)
ZRAM_RS_KO=${dkms_ko:-${ZRAM_RS_KO:-}} "$here/vm.sh" test "${tests[@]}" | tee "$vm_log"
vm_rc=${PIPESTATUS[0]}
timed vm "$phase"
summary=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed' "$vm_log" | tail -n 1)
rm -f "$vm_log"
[ -z "$dkms_ko" ] || rm -f "$dkms_ko"
if [ -n "$summary" ]; then
	read -r vm_passed vm_failed vm_skipped < <(echo "$summary" | awk '{ print $2, $4, $6 }')
	passed=$((passed + vm_passed))
	failed=$((failed + vm_failed))
	skipped=$((skipped + vm_skipped))
fi
if [ "$vm_rc" != 0 ] && { [ -z "$summary" ] || [ "${vm_failed:-0}" = 0 ]; }; then
	record "VM suite ran to the end" 1
fi

# A run that declares how many cases it skips (EXPECTED_SKIPS, set by .ci/run: the cases whose
# kernel feature the run's kernel lacks) fails on any other count: a kernel that lost a debug
# option, or a guest without a client, is not passed over quietly.
if [ -n "${EXPECTED_SKIPS:-}" ]; then
	[ "$skipped" = "$EXPECTED_SKIPS" ]
	record "the run skipped $skipped cases, $EXPECTED_SKIPS declared" $?
fi
prune_cache
echo
[ "$skipped" = 0 ] || echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
