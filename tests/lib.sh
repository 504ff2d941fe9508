#!/bin/bash
# Shared helpers of the VM tests, on top of the kernel's kselftest KTAP helpers (taken from the
# kernel source tree at build time). Each test script sources this file, declares how many cases
# it runs with `plan N` right away, loads zram_rs itself, reports one KTAP line per case with
# `check`/`check_eq`, unloads with `zram_unload` (UNLOAD_CASES cases) and ends with `finish`.

# shellcheck disable=SC2034 # (PAGE, BLOCK, UNLOAD_CASES... are for the scripts that source this)
# shellcheck source=/dev/null
. /usr/share/kselftest/ktap_helpers.sh

# The kernel's page size: the unit of zram's slots, so of orig_data_size, same_pages,
# huge_pages, mem_used (zsmalloc pages), discards and the swap header. 4 KiB, or 16 KiB on
# arm64 16K kernels. (busybox has no getconf; smaps gives the same answer.)
PAGE=$(getconf PAGESIZE 2>/dev/null) ||
	PAGE=$(awk '/^KernelPageSize:/ { print $2 * 1024; exit }' /proc/self/smaps)
# zram's logical block size: 4 KiB on every page size.
BLOCK=4096
# The kernel series running, and whether C zram's user ABI is 7.3's (1) or 6.12's (0): the
# ABI zram_rs follows is the one of the kernel it was built for.
KSERIES=$(uname -r | cut -d. -f1,2)
if [ "${KSERIES%%.*}" -ge 7 ]; then ABI_7_3=1; else ABI_7_3=0; fi
# On 7.2, C zram's ABI is 7.3's but where 7.3 fixed or tightened something (zram_rs.rst, "C zram
# 7.2"): ABI_7_3 is 1 there too, and ABI_7_2 marks those places.
if [ "$KSERIES" = 7.2 ]; then ABI_7_2=1; else ABI_7_2=0; fi
# The number of cases zram_unload reports, the same on every kernel (its kmemleak case is
# skipped where there is no kmemleak), for plans: `plan $((N + UNLOAD_CASES))`.
UNLOAD_CASES=2
KMEMLEAK=/sys/kernel/debug/kmemleak
# 1 on the debug kernel (KASAN, lockdep, kmemleak: the one with kmemleak), several times slower
# under TCG than the others: the scripts that move hundreds of MiB move less there, through the
# same paths (each says how).
if [ -e $KMEMLEAK ]; then DEBUG_KERNEL=1; else DEBUG_KERNEL=0; fi

ktap_print_header

# plan N: declares that the script runs N cases; prints the KTAP plan up front. `finish` fails
# a case when a different number ran, and a script that ends without reaching `finish` (an
# early exit) reports a failed case on its way out.
KTAP_PLANNED=
KTAP_DONE=
plan() {
	KTAP_PLANNED=$1
	ktap_set_plan "$1"
	trap ktap_exit_check EXIT
}

ktap_exit_check() {
	local status=$?
	[ -z "$KTAP_DONE" ] || return
	KTAP_DONE=1
	ktap_test_fail "the script ran to its end (it stopped with status $status after $((KTAP_TESTNO - 1)) of ${KTAP_PLANNED:-?} planned cases)"
	ktap_print_totals
	exit 1
}

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

# Ends the script: the number of cases run must be the plan's.
finish() {
	local ran=$((KTAP_TESTNO - 1))
	if [ -z "$KTAP_PLANNED" ]; then
		ktap_test_fail "the script declares its plan (plan N; $ran cases ran)"
		echo "1..$((KTAP_TESTNO - 1))"
		KSFT_NUM_TESTS=$((KTAP_TESTNO - 1))
	elif [ "$ran" != "$KTAP_PLANNED" ]; then
		ktap_test_fail "ran $ran of $KTAP_PLANNED planned cases"
		KSFT_NUM_TESTS=$KTAP_PLANNED
	else
		KSFT_NUM_TESTS=$KTAP_PLANNED
	fi
	KTAP_DONE=1
	ktap_finished
}

# kmsg_mark NAME: writes a mark line into the kernel log; kmsg_since NAME prints the kernel log
# lines after the latest mark NAME of this script (and fails when there is none). Tests never
# clear the kernel log: the VM checks all of it for problems after each script.
kmsg_mark() {
	echo "zram_rs-test: mark [$1:$$]" >/dev/kmsg
}
kmsg_since() {
	dmesg | awk -v mark="zram_rs-test: mark [$1:$$]" '
		{ line[NR] = $0 }
		index($0, mark) { last = NR }
		END {
			for (i = last + 1; last && i <= NR; i++) print line[i]
			exit !last
		}'
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

# kmemleak_scan: scans twice, after the 5-second minimum age of a reported object (an object is
# reported once two scans in a row find it unreferenced and unchanged). A scan takes about 8 s
# on the debug kernel under TCG.
kmemleak_scan() {
	sleep 6
	echo scan >$KMEMLEAK && echo scan >$KMEMLEAK
}

# module_symbols: zram_rs's function symbols ("ADDRESS NAME", 16 hex digits, sorted), read
# while it is loaded: once it is gone, kmemleak prints its frames as bare addresses.
module_symbols() {
	awk '$4 == "[zram_rs]" && ($2 == "t" || $2 == "T") { print $1, $3 }' /proc/kallsyms | sort
}

# kmemleak_check_unloaded SYMBOLS: one case (skipped without kmemleak), after rmmod: no object
# that kmemleak finds unreferenced has a frame of zram_rs (in the text SYMBOLS spans, plus the
# last function's room) in its allocation's backtrace. Scanning after the unload also finds the
# objects that only the module's own data referred to. The kernel's own leaks (no zram_rs
# frame) are printed, not counted. Clears the report.
kmemleak_check_unloaded() {
	local symbols=$1 description="kmemleak finds no object zram_rs allocated and lost"
	local lo hi
	if [ ! -e $KMEMLEAK ]; then
		ktap_test_skip "$description (no kmemleak in this kernel)"
		return
	fi
	lo=$(echo "$symbols" | head -n 1 | cut -d' ' -f1)
	hi=$(echo "$symbols" | tail -n 1 | cut -d' ' -f1)
	if [ -z "$lo" ] || [ "$lo" = 0000000000000000 ]; then
		ktap_print_msg "no zram_rs symbols were read before the unload: nothing to match"
		ktap_test_fail "$description"
		return
	fi
	if ! kmemleak_scan; then
		ktap_print_msg "kmemleak refused to scan (it turns itself off when its own allocations fail)"
		ktap_test_fail "$description"
		return
	fi
	# One record per object, to the file of those with a frame of zram_rs (in [lo, hi + 16
	# KiB), the largest function being under 16 KiB; or named [zram_rs] if it is still
	# loaded) or of the others.
	local record="" ours=0 others=0 line frame address mine=0
	: >/tmp/kmemleak.ours
	: >/tmp/kmemleak.others
	kmemleak_record() {
		[ -n "$record" ] || return 0
		if [ "$1" = 1 ]; then
			printf '%s' "$record" >>/tmp/kmemleak.ours
			ours=$((ours + 1))
		else
			printf '%s' "$record" >>/tmp/kmemleak.others
			others=$((others + 1))
		fi
		record=""
	}
	while IFS= read -r line; do
		case $line in "unreferenced object"*)
			kmemleak_record $mine
			mine=0
			;;
		esac
		record+="$line"$'\n'
		# A frame: "    SYMBOL+OFFSET/SIZE", or "0x" and the address where no symbol is known
		# (a module unloaded since).
		frame=${line##* }
		case $frame in
		"[zram_rs]")
			mine=1
			continue
			;;
		0x????????????????) address=${frame#0x} ;;
		*) continue ;;
		esac
		if (((16#$address) >= (16#$lo) && (16#$address) < (16#$hi) + 16384)); then
			mine=1
			# Name it from the symbols read before the unload.
			record+="      (zram_rs: $(echo "$symbols" | awk -v a="$address" '$1 <= a { s = $2 } END { print s }'))"$'\n'
		fi
	done <$KMEMLEAK
	kmemleak_record $mine
	echo clear >$KMEMLEAK
	if [ $others -gt 0 ]; then
		ktap_print_msg "kmemleak reports $others object(s) without a zram_rs frame (not counted):"
		sed 's/^/# /' /tmp/kmemleak.others | head -n 40
	fi
	if [ $ours -gt 0 ]; then
		ktap_print_msg "kmemleak, objects zram_rs allocated:"
		sed 's/^/# /' /tmp/kmemleak.ours
		ktap_test_fail "$description"
	else
		ktap_test_pass "$description"
	fi
	rm -f /tmp/kmemleak.ours /tmp/kmemleak.others
}

# zram_unload: UNLOAD_CASES cases. Releases every device zram_rs may still have in use, unloads
# the module and checks that it is gone, then scans for leaks (kmemleak kernels).
zram_unload() {
	local dev err symbols
	for dev in /dev/zram*; do
		[ -e "$dev" ] || continue
		swapoff "$dev" 2>/dev/null
		umount "$dev" 2>/dev/null
	done
	symbols=$(module_symbols)
	if err=$(rmmod zram_rs 2>&1) && ! grep -q '^zram_rs ' /proc/modules; then
		ktap_test_pass "rmmod zram_rs"
	else
		ktap_print_msg "rmmod: ${err:-returned 0 but the module is still listed}"
		ktap_test_fail "rmmod zram_rs"
	fi
	kmemleak_check_unloaded "$symbols"
}

# c_algorithms: what C zram.ko of this kernel offers, read from its comp_algorithm (loaded and
# unloaded again; call it with neither driver loaded): ALGORITHMS_SHOWN (the attribute's text,
# the default in brackets), ALGORITHMS (the names, in its order), DEFAULT_ALGORITHM and
# MULTI_COMP (1 where C zram has recompression, recomp_algorithm). zram_rs built for the kernel
# offers the same: the project's kernels have all seven with lzo-rle the default and
# recompression; Debian's lz4, lz4hc, zstd and deflate with lz4, without recompression.
c_algorithms() {
	if [ "$(drivers_loaded)" != none ] || ! modprobe zram num_devices=1 ||
		! ALGORITHMS_SHOWN=$(cat /sys/block/zram0/comp_algorithm) || [ -z "$ALGORITHMS_SHOWN" ]; then
		echo "c_algorithms: cannot read C zram's algorithms (drivers loaded: $(drivers_loaded))" >&2
		exit 1
	fi
	MULTI_COMP=0
	[ ! -e /sys/block/zram0/recomp_algorithm ] || MULTI_COMP=1
	rmmod zram
	ALGORITHMS=$(echo "$ALGORITHMS_SHOWN" | tr -d '[]')
	ALGORITHMS=$(echo $ALGORITHMS)
	DEFAULT_ALGORITHM=$(echo "$ALGORITHMS_SHOWN" | sed -n 's/.*\[\([^]]*\)\].*/\1/p')
}
# algorithms_shown NAME: comp_algorithm's text with NAME selected.
algorithms_shown() {
	local a
	for a in $ALGORITHMS; do
		if [ "$a" = "$1" ]; then printf '[%s] ' "$a"; else printf '%s ' "$a"; fi
	done
}

# drivers_loaded: the zram drivers /proc/modules lists: "zram", "zram_rs", "zram zram_rs" or
# "none".
drivers_loaded() {
	local found
	found=$(awk '$1 == "zram" || $1 == "zram_rs" { print $1 }' /proc/modules | sort | paste -sd' ')
	echo "${found:-none}"
}

# field N FILE: the Nth whitespace-separated field of a stat file.
field() {
	awk -v n="$1" '{ print $n }' "$2"
}

# mthp_on BYTES: multi-size THP of BYTES on ("always") for anonymous memory, when the kernel
# has that size; fails otherwise. mthp_off puts back what mthp_on found.
MTHP_ENABLED= MTHP_WAS=
mthp_on() {
	MTHP_ENABLED=/sys/kernel/mm/transparent_hugepage/hugepages-$(($1 / 1024))kB/enabled
	[ -w "$MTHP_ENABLED" ] || return 1
	MTHP_WAS=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$MTHP_ENABLED")
	echo always >"$MTHP_ENABLED"
}
mthp_off() {
	[ -z "$MTHP_WAS" ] || echo "$MTHP_WAS" >"$MTHP_ENABLED"
	MTHP_WAS=
}

# memory_cgroup NAME LIMIT SIZE: creates cgroup NAME under the cgroup2 root with the memory
# controller and LIMIT (memory.high or memory.max) set to SIZE; prints its directory.
memory_cgroup() {
	local cg=/sys/fs/cgroup/$1
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p "$cg"
	echo "$3" >"$cg/$2"
	echo "$cg"
}

# compare_transcripts C RS LINES: the scenario's transcripts of C zram and zram_rs, one case
# for C's length, one for zram_rs's, then one per line (LINES + 2 cases).
compare_transcripts() {
	local i c rs
	check_eq "C zram's transcript has the scenario's $3 lines" "$3" "$(wc -l <"$1")"
	check_eq "zram_rs's transcript has as many lines" "$(wc -l <"$1")" "$(wc -l <"$2")"
	for i in $(seq 1 "$3"); do
		c=$(sed -n "${i}p" "$1")
		rs=$(sed -n "${i}p" "$2")
		check_eq "as C: $c" "$c" "$rs"
	done
}

# against_c NAME LINES: the differential oracle of a script's `scenario MODULE` function: runs it
# against C zram.ko, unloads that, runs it against zram_rs.ko (left loaded), into /tmp/NAME.c
# and /tmp/NAME.rs, and compares the transcripts line for line (LINES expected, one case each,
# plus two); then one case more: zram_rs read back every page a "data" step compared.
against_c() {
	scenario zram >"/tmp/$1.c" 2>&1
	rmmod zram
	scenario zram_rs >"/tmp/$1.rs" 2>&1
	compare_transcripts "/tmp/$1.c" "/tmp/$1.rs" "$2"
	check_eq "zram_rs read every page back as written, after each step" 0 \
		"$(grep -c 'data -> DIFFERENT' "/tmp/$1.rs")"
}

# block_state_summary: zram0's debugfs block_state without its time column (zram_rs keeps whole
# seconds, as C 7.3; C 6.12 has microseconds): the number of lines, each mark pattern's count
# and a digest of "index marks" of every line; or the read's error.
block_state_summary() {
	local bs=/sys/kernel/debug/zram/zram0/block_state err
	err=$(cat $bs 2>&1 >/dev/null) || { echo "${err##*: }"; return; }
	awk '{ print $1, $3 }' $bs >/tmp/block_state.lines
	echo "$(wc -l </tmp/block_state.lines) $(awk '{ print $2 }' /tmp/block_state.lines | sort | uniq -c | tr -s ' ' | tr '\n' ,) $(md5sum </tmp/block_state.lines | cut -c1-8)"
}

# reads_as DEV PAGES FILE: "same" when the first PAGES pages of DEV read back (direct) as FILE,
# "DIFFERENT" otherwise.
reads_as() {
	if cmp -s <(dd if="$1" bs="$PAGE" count="$2" iflag=direct 2>/dev/null) "$3"; then
		echo same
	else
		echo DIFFERENT
	fi
}

# fio ARGS...: fio, failing (status 99) where a job died on a signal or an assertion, which fio
# 3.33 reports with exit status 0 (its trim_percentage option, for one, aborts on an assertion).
# Its standard error is searched too (and passed on). (A caller that runs it in the background
# gets the subshell's PID: waiting works, a kill would not reach fio; none kills it.)
fio() {
	local a out= tmp err rc
	for a in "$@"; do
		case $a in --output=*) out=${a#--output=} ;; esac
	done
	tmp=$(mktemp) err=$(mktemp)
	if [ -n "$out" ]; then
		command fio "$@" 2>"$err"
		rc=$?
	else
		command fio "$@" >"$tmp" 2>"$err"
		rc=$?
		cat "$tmp"
	fi
	cat "$err" >&2
	if [ $rc = 0 ] && cat "$tmp" "$err" ${out:+"$out"} 2>/dev/null | grep -qE 'got signal|Assertion .* failed'; then
		echo "fio: a job died (exit status 0)" >&2
		rc=99
	fi
	rm -f "$tmp" "$err"
	return $rc
}

# check_io_ok SYSDIR WHAT: one case: io_stat of the device at SYSDIR counts no failed read or
# write (after a swap workload: a failed swap I/O loses a page or kills a task).
check_io_ok() {
	check_eq "io_stat: no failed reads or writes after $2" "0 0" "$(field 1 "$1/io_stat") $(field 2 "$1/io_stat")"
}

# Device N's sysfs directory.
sysblock() {
	echo "/sys/block/zram$1"
}

# A /proc/meminfo field, in kB: meminfo_kb MemAvailable.
meminfo_kb() {
	awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo
}

mem_free_kb() {
	meminfo_kb MemFree
}
