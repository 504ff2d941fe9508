#!/bin/bash
# Shared helpers of the VM tests, on top of the kernel's kselftest KTAP helpers (taken from the
# kernel source tree at build time). Each test script sources this file, loads zram_rs itself,
# reports one KTAP line per case with `check`, and ends with `finish`.

# shellcheck source=/dev/null
. /usr/share/kselftest/ktap_helpers.sh

PAGE=4096
ktap_print_header

# check DESCRIPTION COMMAND...: one test case, passing when COMMAND succeeds.
check() {
	local description=$1
	shift
	if "$@"; then
		ktap_test_pass "$description"
	else
		ktap_test_fail "$description"
	fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		ktap_test_pass "$1"
	else
		ktap_print_msg "expected '$2', got '$3'"
		ktap_test_fail "$1"
	fi
}

# The plan goes last: the number of cases is known only at the end.
finish() {
	echo "1..$((KTAP_TESTNO - 1))"
	KSFT_NUM_TESTS=$((KTAP_TESTNO - 1))
	ktap_finished
}

# write_attr FILE VALUE: writes VALUE (no newline added) in one write(2) and prints "OK" or the
# error text (e.g. "Invalid argument"), so tests can compare errnos with C zram's.
write_attr() {
	local err
	if err=$( { printf '%s' "$2" >"$1"; } 2>&1); then
		echo OK
	else
		echo "$err" | sed -e 's/.*write error: //' -e 's/.*: //'
	fi
}

zram_load() {
	modprobe zram_rs "$@"
}

# On a kernel with kmemleak: reports unreferenced objects allocated by zram_rs, while the module
# is still loaded so that its addresses resolve to symbols. An object must be 5 s old to count.
kmemleak_check() {
	local report=/sys/kernel/debug/kmemleak
	[ -e $report ] || return 0
	sleep 6
	echo scan >$report
	echo scan >$report
	if grep -q zram_rs $report; then
		ktap_print_msg "kmemleak:"
		sed 's/^/# /' $report
		ktap_test_fail "kmemleak finds no zram_rs object leaked"
	else
		ktap_test_pass "kmemleak finds no zram_rs object leaked"
	fi
	echo clear >$report
}

# Unloads zram_rs after releasing every device it may still have in use (and, on a kmemleak
# kernel, checks for leaks first).
zram_unload() {
	local dev
	for dev in /dev/zram*; do
		[ -e "$dev" ] || continue
		swapoff "$dev" 2>/dev/null
		umount "$dev" 2>/dev/null
	done
	kmemleak_check
	rmmod zram_rs
}

# field N FILE: the Nth whitespace-separated field of a stat file.
field() {
	awk -v n="$1" '{ print $n }' "$2"
}

# Device N's sysfs directory.
sysblock() {
	echo "/sys/block/zram$1"
}

mem_free_kb() {
	awk '/^MemFree:/ { print $2 }' /proc/meminfo
}
