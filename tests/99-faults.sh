#!/bin/bash
# Allocation failures injected into zram_rs's work (kernels with CONFIG_FAILSLAB,
# CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAULT_INJECTION_DEBUG_FS, i.e. the debug kernel; elsewhere
# every case but the unload ones is skipped). Only the workload's processes fail
# (task-filter=Y and /proc/PID/make-it-fail, or /proc/thread-self/fail-nth), never the harness.
#  - disksize and hot_add with their Nth allocation failing, for every N until one succeeds
#    without a failure (fail-nth): a failed one leaves no device or initialisation behind.
#  - writeback (to the VM's disk) and recompression (to zstd) of 16 pages, 8 random and 8 text,
#    and a read of the 16 pages written back (compressed on 7.3; the reading task's part: a
#    worker's allocations are not failed),
#    with their Nth allocation failing, the same way: whatever each answers, every page reads
#    back as written, and once all are discarded nothing is stored and no backing block is
#    left in use.
#  - one write per block while 20% of slab and page allocations fail: a write the driver fails
#    is counted in failed_writes; by what the driver counted (failed_writes, the sectors
#    written in the disk's stat), a block it stored reads back exactly, one it failed or never
#    received still reads as before (zeros) (under injected failures the kernel has told dd a
#    write succeeded that the driver failed or never received: such blocks are listed);
#    orig_data_size counts exactly the pages stored. (Reads allocate nothing in the driver on
#    4 KiB pages.)
#  - memfill (tools/memfill.c) swapping to zram_rs from a memory cgroup while its own
#    allocations fail, which fails the swap writes its reclaim makes: a failed swap write leaves
#    the page in memory, so every page must verify, and after swapoff only the swap header is
#    stored. The device stores compression units of 16 KiB (64 KiB on 16 KiB pages) and
#    multi-size THP of that size is on: folios swapped out whole take the unit path, whose
#    allocations fail too (a unit is then stored page by page, whose own may fail), and are
#    read back through their units.
# Injection is off (probability 0, the default filters) before each check and unloading; no
# leak (kmemleak cases of zram_unload), no oops, KASAN or lockdep report (the VM checks the log).
# Allocation-failure reports (warn_alloc, kmem_cache_create) print a stack by design, so the
# injected phases are bracketed like an expected OOM (scripts/guest/init): inside, a stack dump
# is allowed, an oops, BUG, WARNING, KASAN or lockdep report is not.
# The kernel itself leaks on one of the disksize paths: when a failure lands in the sysfs
# registration of a zsmalloc pool's slab cache (kmem_cache_create -> sysfs_slab_add ->
# kobject_init_and_add), mm/slub.c does not free the kobject's name (C zram.ko's zs_create_pool
# leaks it the same way). After the sweeps, kmemleak's report must hold those names and
# nothing else (a case of its own); they are then cleared, so the unload's kmemleak cases see
# only what came after. The periodic kmemleak scan is off meanwhile, so that it cannot report
# them first.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cases=18
plan $((cases + UNLOAD_CASES))

# shellcheck disable=SC2119 # (no module parameters)
zram_load
z=$(sysblock 0)
dev=/dev/zram0
ctl=/sys/class/zram-control
failslab=/sys/kernel/debug/failslab
fail_page=/sys/kernel/debug/fail_page_alloc

if [ ! -d $failslab ] || [ ! -d $fail_page ] || [ ! -e /proc/self/make-it-fail ]; then
	for i in $(seq 1 $cases); do
		ktap_test_skip "fault injection case $i (no failslab/fail_page_alloc in this kernel)"
	done
	zram_unload
	finish
fi

# inject PERCENT: make-it-fail tasks see PERCENT% of their slab and page allocations fail,
# sleeping and highmem ones included (zsmalloc's pages are highmem, its slow path sleeps), and
# every allocation counts for fail-nth. inject_off: back to the kernel's defaults (no failure).
inject() {
	local attr
	for attr in $failslab $fail_page; do
		echo 0 >"$attr"/probability
		echo N >"$attr"/ignore-gfp-wait
		echo 0 >"$attr"/verbose
		echo 1 >"$attr"/interval
		echo 0 >"$attr"/space
		echo -1 >"$attr"/times
		echo Y >"$attr"/task-filter
	done
	echo N >$fail_page/ignore-gfp-highmem
	echo 0 >$fail_page/min-order
	for attr in $failslab $fail_page; do
		echo "$1" >"$attr"/probability
	done
}
inject_off() {
	local attr
	for attr in $failslab $fail_page; do
		echo 0 >"$attr"/probability
		echo Y >"$attr"/ignore-gfp-wait
		echo 1 >"$attr"/times
		echo N >"$attr"/task-filter
	done
	echo Y >$fail_page/ignore-gfp-highmem
}
# write_block I: writes block I of the pattern with dd as a process whose allocations may
# fail. conv=fsync: when the direct write cannot pin its buffer, the block layer falls back to a
# buffered write, whose writeback error (the driver failing the page) only fsync reports; dd
# would otherwise succeed with the block lost in the page cache. So that dd's status is the
# driver's answer. dd's allocations fail only from the moment it waits for its input: after its
# exec, whose allocations must not fail. Its input is a FIFO that this shell holds open (so
# nothing blocks on an open) and fills once dd waits in its read. Sets dd_status; dd's messages
# are in /tmp/faults.err.
# A buffered write that fails leaves its error on the device's page cache until an fsync
# reports it, and a file opened afterwards has not seen it: dd's fsync of the next block would
# fail with it, although that block was written. After a dd that failed, this shell's
# fdatasync (whose allocations do not fail) takes any such error.
fifo=/tmp/faults.fifo
write_block() {
	local pid stat n
	rm -f $fifo
	mkfifo $fifo
	exec 4<>$fifo
	dd if=$fifo of=$dev bs=$BLOCK count=1 seek="$1" iflag=fullblock oflag=direct conv=fsync \
		2>/tmp/faults.err &
	pid=$!
	# Sleeping (state S) as dd: in the read of the FIFO. (A counted loop: a list from seq
	# would be expanded for every block, most of a second each on the debug kernel.)
	n=0
	while [ $n -lt 100000 ]; do
		read -r stat <"/proc/$pid/stat" || break
		case $stat in *"(dd) S "*) break ;; esac
		n=$((n + 1))
	done
	echo 1 >"/proc/$pid/make-it-fail" 2>/dev/null
	dd if=$pattern bs=$BLOCK skip="$1" count=1 >&4 2>/dev/null
	wait $pid
	dd_status=$?
	exec 4>&-
	if [ $dd_status != 0 ]; then sync -d $dev 2>/dev/null; fi
	return 0
}
expect_begin() { echo "zram_rs-test: expect oom begin" >/dev/kmsg; }
expect_end() { echo "zram_rs-test: expect oom end" >/dev/kmsg; }

# nth N FILE [VALUE]: makes this process's Nth allocation from now fail, then writes VALUE to
# FILE (or reads FILE into `out` without VALUE). Sets status (0 when the access succeeded) and
# injected (1 when the failure was injected, by the access: nothing else runs in between).
# Runs in the sweeping process, a subshell of the script's, so that no fork is counted.
nth() {
	local left=1
	out=
	# The shell's own opens come before the failure is armed: only the access itself can take
	# it (an open that failed would count as the driver failing).
	if [ $# = 3 ]; then exec 5>"$2"; else exec 5<"$2"; fi
	exec 6>/dev/null
	echo "$1" >/proc/thread-self/fail-nth || return
	if [ $# = 3 ]; then
		{ printf '%s' "$3" >&5; } 2>&6
	else
		{ read -r out <&5; } 2>&6
	fi
	status=$?
	exec 5>&- 6>&-
	# Reads 0 when the failure was injected; reading fails (the open's allocation was the Nth)
	# or gives the rest when it was not. Then disarmed.
	{ read -r left </proc/thread-self/fail-nth; } 2>/dev/null
	echo 0 >/proc/thread-self/fail-nth 2>/dev/null
	if [ "$left" = 0 ]; then injected=1; else injected=0; fi
}

# The pages the post-processing sweeps store: 8 random (stored huge), 8 text.
{
	head -c $((8 * PAGE)) /dev/urandom
	yes "zram_rs fault injection in post-processing" | head -c $((8 * PAGE))
} >/tmp/faults.pp
# pp_setup [compressed]: zram0 with the VM's disk as its backing device and zstd as
# recompression algorithm, holding the 16 pages, all idle; with "compressed", pages are written
# back compressed where the kernel has compressed_writeback (7.3). (These name /dev/zram0:
# try's local `dev` hides the script's.)
pp_setup() {
	echo 1 >"$z/reset"
	[ ! -e "$z/compressed_writeback" ] || echo $(($# > 0)) >"$z/compressed_writeback"
	echo algo=zstd >"$z/recomp_algorithm"
	echo /dev/vda >"$z/backing_dev"
	echo 1M >"$z/disksize"
	dd if=/tmp/faults.pp of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	echo all >"$z/idle"
}
# pp_check WHAT N: the 16 pages read back as written; after discarding everything, nothing is
# stored and no backing block is in use. Counts in bad. Sets pp_did to what the operation did:
# pages written to the backing device, pages read from it, or pages recompressed.
pp_check() {
	local mm bd
	read -r -a bd <"$z/bd_stat"
	if [ "$1" = writeback ]; then
		pp_did=${bd[2]}
	elif [ "$1" = readback ]; then
		pp_did=${bd[1]}
	else
		pp_did=$(awk '$3 ~ /r/' /sys/kernel/debug/zram/zram0/block_state | wc -l)
	fi
	if ! cmp -s <(dd if=/dev/zram0 bs="$PAGE" count=16 iflag=direct 2>/dev/null) /tmp/faults.pp; then
		bad=$((bad + 1))
		ktap_print_msg "$1 with allocation $2 failing: the pages do not read back as written"
	fi
	blkdiscard /dev/zram0
	read -r -a mm <"$z/mm_stat"
	read -r -a bd <"$z/bd_stat"
	if [ "${mm[0]} ${mm[1]} ${bd[0]}" != "0 0 0" ]; then
		bad=$((bad + 1))
		ktap_print_msg "$1 with allocation $2 failing: after discarding everything, mm_stat ${mm[*]}, bd_stat ${bd[*]}"
	fi
}

# try WHAT N: disksize or hot_add with its Nth allocation failing; afterwards the device must
# be initialised (or exist, for hot_add) exactly when the write (read) succeeded; writeback or
# recompress with its Nth allocation failing, or readback, a read of the pages written back
# (compressed on 7.3), through the page cache: see pp_check. Counts in failed,
# tolerated (an injected failure that the operation absorbed) and bad.
try() {
	local init size devs dev
	if [ "$1" = readback ]; then
		pp_setup compressed
		echo idle >"$z/writeback"
		blockdev --flushbufs /dev/zram0
		nth "$2" /dev/zram0
		# What the read gave, whole: its one read() filled the page cache with every page it
		# read (readahead covers the 16), and a buffered read now finds those pages there as
		# the injected read left them (a page it failed to read is not up to date, and is read
		# again): each must be the page written.
		if ! cmp -s <(dd if=/dev/zram0 bs="$PAGE" count=16 2>/dev/null) /tmp/faults.pp; then
			bad=$((bad + 1))
			ktap_print_msg "readback with allocation $2 failing (read status $status): the page cache holds pages other than written"
		fi
		pp_check "$1" "$2"
	elif [ "$1" = writeback ] || [ "$1" = recompress ]; then
		pp_setup
		if [ "$1" = writeback ]; then
			nth "$2" "$z/writeback" huge
		else
			nth "$2" "$z/recompress" type=idle
		fi
		pp_check "$1" "$2"
	elif [ "$1" = disksize ]; then
		nth "$2" "$z/disksize" 1M
		read -r init <"$z/initstate"
		read -r size <"$z/disksize"
		if [ "$status" = 0 ]; then
			[ "$init" = 1 ] || bad=$((bad + 1))
			echo 1 >"$z/reset"
		elif [ "$init $size" != "0 0" ]; then
			bad=$((bad + 1))
			ktap_print_msg "disksize failed at allocation $2 but left initstate $init, disksize $size"
			echo 1 >"$z/reset"
		fi
	else
		nth "$2" $ctl/hot_add
		if [ "$status" = 0 ]; then
			if [ -e "/sys/block/zram$out" ] && echo 1M >"/sys/block/zram$out/disksize"; then
				echo "$out" >$ctl/hot_remove || bad=$((bad + 1))
			else
				bad=$((bad + 1))
				ktap_print_msg "hot_add with allocation $2 failing returned '$out' but no usable device"
			fi
		fi
		devs=(/sys/block/zram*)
		if [ "${devs[*]}" != /sys/block/zram0 ]; then
			bad=$((bad + 1))
			ktap_print_msg "hot_add with allocation $2 failing left ${devs[*]}"
			for dev in "${devs[@]}"; do
				[ "$dev" = /sys/block/zram0 ] || echo "${dev#/sys/block/zram}" >$ctl/hot_remove
			done
		fi
	fi
	if [ "$status" != 0 ]; then
		failed=$((failed + 1))
	elif [ "$injected" = 1 ]; then
		tolerated=$((tolerated + 1))
	fi
}

# sweep WHAT: `try WHAT N` for N = 1, 2, ... 48, then every third N, until the operation
# succeeds with nothing injected at N = n (it makes n - 1 allocations); then every N of the last
# 64 not tried yet, where the driver's last steps are (the middle is mostly zsmalloc's pool
# creation, or the block layer's disk). Prints "n tried failed tolerated bad" to fd 3.
sweep() {
	local n m tried=0
	failed=0 tolerated=0 bad=0
	n=1
	while [ $n -le 5000 ]; do
		try "$1" $n
		tried=$((tried + 1))
		[ "$status" != 0 ] || [ "$injected" = 1 ] || break
		if [ $n -lt 48 ]; then n=$((n + 1)); else n=$((n + 3)); fi
	done
	for m in $(seq $((n > 112 ? n - 64 : 49)) $((n - 1))); do
		[ $(((m - 48) % 3)) = 0 ] && continue
		try "$1" "$m"
		tried=$((tried + 1))
	done
	echo "$n $tried $failed $tolerated $bad" >&3
}

# slub_name_leaks_only: one case (skipped without kmemleak): every object kmemleak reports is
# a slab cache's kobject name left by sysfs_slab_add (the kernel's leak described above); the
# others are printed. Clears the report.
slub_name_leaks_only() {
	local description="after the sweeps, kmemleak reports only the kernel's own sysfs_slab_add name leak"
	local known
	if [ ! -e $KMEMLEAK ]; then
		ktap_test_skip "$description (no kmemleak in this kernel)"
		return
	fi
	echo "zram_rs-test: expect kmemleak begin" >/dev/kmsg
	kmemleak_scan
	echo "zram_rs-test: expect kmemleak end" >/dev/kmsg
	# One record per reported object; those allocated under sysfs_slab_add are counted, the
	# others printed.
	known=$(awk '
		function flush() { if (obj != "") { if (obj ~ / sysfs_slab_add\+/) n++; else printf "%s", obj > "/tmp/faults.leaks" } obj = "" }
		/^unreferenced object/ { flush() }
		{ obj = obj $0 "\n" }
		END { flush(); print n + 0 }' $KMEMLEAK)
	echo clear >$KMEMLEAK
	if [ -s /tmp/faults.leaks ]; then
		ktap_print_msg "kmemleak, other than sysfs_slab_add's names:"
		sed 's/^/# /' /tmp/faults.leaks
		ktap_test_fail "$description"
	else
		ktap_print_msg "kmemleak: $known slab cache names left by sysfs_slab_add (the kernel's leak) (${SECONDS} s so far)"
		ktap_test_pass "$description"
	fi
	rm -f /tmp/faults.leaks
}

[ ! -e $KMEMLEAK ] || echo scan=off >$KMEMLEAK
inject 0
expect_begin
(sweep disksize) 3>/tmp/faults.sweep
read -r n tried failed tolerated bad </tmp/faults.sweep
expect_end
ktap_print_msg "disksize: $((n - 1)) allocations in the path, $tried tried, $failed failed, $tolerated absorbed the failure (${SECONDS} s so far)"
check_eq "disksize with one of its allocations failing ($tried of them): nothing left initialised" 0 "$bad"
check "disksize fails when an allocation fails, succeeds when none does" \
	test "$n" -le 5000 -a "$failed" -gt 0
expect_begin
(sweep hot_add) 3>/tmp/faults.sweep
read -r n tried failed tolerated bad </tmp/faults.sweep
expect_end
ktap_print_msg "hot_add: $((n - 1)) allocations in the path, $tried tried, $failed failed, $tolerated absorbed the failure (${SECONDS} s so far)"
check_eq "hot_add with one of its allocations failing ($tried of them): no device left behind" 0 "$bad"
check "hot_add fails when an allocation fails, succeeds when none does" \
	test "$n" -le 5000 -a "$failed" -gt 0
# sweep_pp WHAT: `try WHAT N` for N = 1, 2, ... 24, then every fifth N, until the operation
# succeeds with nothing injected (each try sets a device up again: a shorter sweep than
# sweep's). Prints "n tried failed tolerated bad did" to fd 3, did being what the last,
# uninjected operation did (pp_check).
sweep_pp() {
	local n=1 tried=0
	failed=0 tolerated=0 bad=0
	while [ $n -le 2000 ]; do
		try "$1" $n
		tried=$((tried + 1))
		[ "$status" != 0 ] || [ "$injected" = 1 ] || break
		if [ $n -lt 24 ]; then n=$((n + 1)); else n=$((n + 5)); fi
	done
	echo "$n $tried $failed $tolerated $bad $pp_did" >&3
}
for what in writeback recompress readback; do
	expect_begin
	(sweep_pp $what) 3>/tmp/faults.sweep
	read -r n tried failed tolerated bad did </tmp/faults.sweep
	expect_end
	ktap_print_msg "$what: $((n - 1)) allocations in the path, $tried tried, $failed failed, $tolerated absorbed the failure, $did pages done without a failure (${SECONDS} s so far)"
	check "$what with one of its allocations failing ($tried of them): pages intact, nothing left stored or in use, and without a failure the pages done ($did)" \
		test "$bad" = 0 -a "${did:-0}" -gt 0
done
echo 1 >"$z/reset"
inject_off
slub_name_leaks_only

# One write per block under injection. Blocks cycle through four kinds: random, compressible
# text naming the block, same-filled with a word naming the block, half text half random.
blocks=128
pattern=/tmp/faults.pattern
for i in $(seq 0 $((blocks - 1))); do
	case $((i % 4)) in
	0) head -c $BLOCK /dev/urandom ;;
	1) yes "zram_rs fault injection, block $i" | head -c $BLOCK ;;
	2) yes "$(printf '%07d' "$i")" | head -c $BLOCK ;;
	3)
		yes "block $i" | head -c $((BLOCK / 2))
		head -c $((BLOCK / 2)) /dev/urandom
		;;
	esac
done >$pattern
head -c $((blocks * BLOCK)) /dev/zero >/tmp/faults.zero
echo $((4 << 20)) >"$z/disksize"
declare -a result dd_said driver_saw driver
ok=0 eio=0 other=0
kmsg_mark writes
inject 20
expect_begin
# (failed writes through the buffered fallback log "Buffer I/O error ... lost async page write")
echo "zram_rs-test: expect io-error begin" >/dev/kmsg
for i in $(seq 0 $((blocks - 1))); do
	# What the driver counted during this write (builtins only: this shell's allocations do
	# not fail, but nothing here should add to the log either): the sectors written that
	# reached it (the disk's stat, field 7, which the driver accounts) and the writes it
	# failed.
	read -r -a io_before <"$z/io_stat"
	read -r -a mm_before <"$z/mm_stat"
	read -r -a st_before <"$z/stat"
	write_block "$i"
	read -r -a io_after <"$z/io_stat"
	read -r -a mm_after <"$z/mm_stat"
	read -r -a st_after <"$z/stat"
	failed=$((io_after[1] - io_before[1])) sectors=$((st_after[6] - st_before[6]))
	driver_saw[i]="failed_writes +$failed, sectors written +$sectors, orig_data_size ${mm_before[0]} -> ${mm_after[0]}"
	if [ $failed -gt 0 ]; then
		driver[i]=failed
	elif [ $sectors -ge $((BLOCK / 512)) ]; then
		driver[i]=stored
	else
		driver[i]=none
	fi
	if [ $dd_status = 0 ]; then
		result[i]=ok ok=$((ok + 1))
		dd_said[i]=$(tr '\n' ';' </tmp/faults.err)
	elif grep -q 'Input/output error' /tmp/faults.err; then
		result[i]=eio eio=$((eio + 1))
	else
		result[i]=other other=$((other + 1))
	fi
done
inject_off
echo "zram_rs-test: expect io-error end" >/dev/kmsg
expect_end
ktap_print_msg "$blocks block writes under injection: $ok succeeded, $eio EIO, $other failed otherwise; io_stat: $(cat "$z/io_stat") (${SECONDS} s so far)"
check "writes under injection: some succeeded ($ok), some failed in the driver with EIO ($eio)" \
	test $ok -gt 0 -a $eio -gt 0
# dd's message can be lost (writing it may fail too), so only a range is known.
failed_writes=$(field 2 "$z/io_stat")
check "failed_writes ($failed_writes) counts the writes that failed with EIO ($eio) and at most the other failed ones ($other)" \
	test "$failed_writes" -ge $eio -a "$failed_writes" -le $((eio + other))

# differing A B: the numbers of the blocks in which files A and B differ.
differing() {
	cmp -l "$1" "$2" 2>/dev/null | awk -v b=$BLOCK '{ k = int(($1 - 1) / b); if (!(k in s)) { s[k] = 1; print k } }'
}
dd if=$dev of=/tmp/faults.back bs=$BLOCK count=$blocks iflag=direct 2>/dev/null
declare -A unlike_pattern=() nonzero=()
for i in $(differing /tmp/faults.back $pattern); do unlike_pattern[$i]=1; done
for i in $(differing /tmp/faults.back /tmp/faults.zero); do nonzero[$i]=1; done
wrong=0 wrong_blocks=() mismatches=()
declare -A stored_pages=()
for i in $(seq 0 $((blocks - 1))); do
	# The driver's side decides: a block it stored reads as written; one it failed, or never
	# received, reads as before (zeros).
	case ${driver[i]} in
	stored) bad_block=${unlike_pattern[$i]:-} ;;
	*) bad_block=${nonzero[$i]:-} ;;
	esac
	if [ -n "$bad_block" ]; then
		wrong=$((wrong + 1))
		wrong_blocks+=("block $i (write: ${result[i]}${dd_said[i]:+, dd: ${dd_said[i]}}; driver: ${driver[i]}, ${driver_saw[i]}) reads $(od -An -tx1 -N16 -j $((i * BLOCK)) /tmp/faults.back | tr -s ' ')..., written $(od -An -tx1 -N16 -j $((i * BLOCK)) $pattern | tr -s ' ')...")
	fi
	# dd succeeding although the driver failed its write, or never received it (both seen under
	# injected failures): listed for the log.
	case ${driver[i]}/${result[i]} in
	failed/ok | none/ok) mismatches+=("block $i: dd succeeded; driver: ${driver[i]}, ${driver_saw[i]}") ;;
	esac
	[ -z "${nonzero[$i]:-}" ] || stored_pages[$((i * BLOCK / PAGE))]=1
done
# What the kernel said about the writes, when a block is wrong (the block layer's own messages;
# not the page fault handler's retries), then the wrong blocks, last so that they stay in view.
[ $wrong = 0 ] || kmsg_since writes | grep -v -e 'zram_rs-test' -e 'VM_FAULT_OOM leaked' |
	tail -n 30 | sed 's/^/# kernel: /'
for line in "${wrong_blocks[@]}"; do ktap_print_msg "$line"; done
for line in "${mismatches[@]}"; do ktap_print_msg "$line"; done
check_eq "every block the driver stored reads back as written, every other as before (zeros)" \
	0 $wrong

check_eq "orig_data_size counts exactly the pages stored" $((${#stored_pages[@]} * PAGE)) \
	"$(field 1 "$z/mm_stat")"
blkdiscard $dev
check_eq "all discarded: orig_data_size compr_data_size same_pages huge_pages" "0 0 0 0" \
	"$(awk '{ print $1, $2, $6, $8 }' "$z/mm_stat")"

# Swap: memfill, in a memory cgroup that keeps a third of what it fills, so that the cgroup's
# reclaim swaps its pages out from its own context, while its allocations fail, those of the
# swap writes included. memfill makes itself a failing task once it has mapped its memory: its
# exec must not fail (past exec's point of no return a failure is a SIGSEGV).
echo 1 >"$z/reset"
unit=16384
[ "$PAGE" -lt $unit ] || unit=65536
mthp_on $unit || true
echo $unit >"$z/compress_unit"
echo 1G >"$z/disksize"
mkswap $dev >/dev/null
swapon $dev
# memory.high, not memory.max: with a fifth of the swap writes failing, reclaim falls behind
# at times, and memory.max would then OOM-kill memfill; past memory.high it is throttled.
cg=$(memory_cgroup zram_rs_faults memory.high 32M)
failed_writes=$(field 2 "$z/io_stat")
inject 20
expect_begin
# (the failed swap writes log "Write-error on swap-device")
echo "zram_rs-test: expect io-error begin" >/dev/kmsg
MEMFILL_MAKE_IT_FAIL=1 bash -c "echo \$\$ >$cg/cgroup.procs && exec memfill 96 1" \
	>/tmp/memfill.out 2>&1 &
pid=$!
wait $pid
rc=$?
inject_off
echo "zram_rs-test: expect io-error end" >/dev/kmsg
expect_end
sed 's/^/# /' /tmp/memfill.out
ktap_print_msg "memfill exit status: $rc (${SECONDS} s so far)"
ktap_print_msg "io_stat after memfill: $(cat "$z/io_stat"); mm_stat: $(cat "$z/mm_stat")"
check "memfill under injection: 96 MiB in a 32 MiB cgroup, every page verified" test $rc = 0
check "swap writes failed under injection" test "$(field 2 "$z/io_stat")" -gt "$failed_writes"
mthp_off
ktap_print_msg "unit_stat after memfill: $(cat "$z/unit_stat")"
check "folios swapped out as units under injection and read back through them" \
	test "$(field 4 "$z/unit_stat")" -gt 0
check "swapoff after injection" swapoff $dev
check_eq "every slot freed but the swap header" "$PAGE" "$(field 1 "$z/mm_stat")"
rmdir $cg

rm -f $pattern /tmp/faults.* /tmp/memfill.out
[ ! -e $KMEMLEAK ] || echo scan=on >$KMEMLEAK
zram_unload
finish
