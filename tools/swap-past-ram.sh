#!/bin/bash
# An experiment, run in the VM like a test script: whose are the kernel's "page allocation
# failure" reports when swap on zram takes more than the guest's RAM? Usage (on the host):
#   make vmtest TESTS=tools/swap-past-ram.sh [KERNEL=...] VM_APPEND="zram_rs.first=zram"
# C zram.ko and zram_rs.ko take turns, ROUNDS rounds (zram_rs.rounds=, default 4), the driver
# that zram_rs.first= names (zram or zram_rs, default zram_rs) first. Each round loads the
# driver, makes a disk of zram_rs.disksize= (default 1G) its swap, runs memfill over RAM +
# zram_rs.over= MiB (default 256) of mixed pages, zram_rs.passes= times over (default 1; every
# page checked each time), and prints how many allocation failures the kernel reported, with
# each report's task, GFP mask and the first function of its stack that is not the page
# allocator's, the lowest MemFree seen and the most swap used; then swapoff and unload. Cases
# check each round's set-up and memfill's data (its exit 1: a page read back differently; an
# OOM kill is a result, printed, not a failure), so a lost page still fails the run; the
# reports themselves are what the experiment measures, not failures (bracketed as expected).
. "$(dirname "$0")/lib.sh"

first=zram_rs rounds=4 disksize=1G over=256 passes=1
for arg in $(cat /proc/cmdline); do
	case $arg in
	zram_rs.first=*) first=${arg#*=} ;;
	zram_rs.rounds=*) rounds=${arg#*=} ;;
	zram_rs.disksize=*) disksize=${arg#*=} ;;
	zram_rs.over=*) over=${arg#*=} ;;
	zram_rs.passes=*) passes=${arg#*=} ;;
	esac
done
case $first in
zram) second=zram_rs ;;
zram_rs) second=zram ;;
*)
	echo "swap-past-ram: zram_rs.first= takes zram or zram_rs, not $first" >&2
	exit 1
	;;
esac
plan $((rounds * 3))

ram_mib=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)
size=$((ram_mib + over))
ktap_print_msg "RAM $ram_mib MiB, memfill $size MiB x $passes, swap $disksize, $rounds rounds, $first first; kernel $(uname -r)"
for round in $(seq 1 "$rounds"); do
	if [ $((round % 2)) = 1 ]; then driver=$first; else driver=$second; fi
	check "round $round, $driver: loaded, $disksize of swap" eval "modprobe $driver num_devices=1 &&
		echo $disksize >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"
	kmsg_mark "round$round"
	echo "zram_rs-test: expect oom begin" >/dev/kmsg
	memfill "$size" "$passes" >/tmp/memfill.out 2>&1 &
	filler=$!
	min_free=$((1 << 40)) max_swap=0
	while kill -0 $filler 2>/dev/null; do
		free=$(awk '/MemFree/ { print $2 }' /proc/meminfo)
		swap=$(awk '/SwapTotal/ { t = $2 } /SwapFree/ { f = $2 } END { print t - f }' /proc/meminfo)
		[ "$free" -ge "$min_free" ] || min_free=$free
		[ "$swap" -le "$max_swap" ] || max_swap=$swap
		sleep 1
	done
	wait $filler
	rc=$?
	echo "zram_rs-test: expect oom end" >/dev/kmsg
	kmsg_since "round$round" >/tmp/round.log
	reports=$(grep -c 'page allocation failure' /tmp/round.log)
	ktap_print_msg "round $round, $driver: $reports allocation failure report(s); MemFree down to $((min_free / 1024)) MiB, swap up to $((max_swap / 1024)) MiB; mm_stat $(cat /sys/block/zram0/mm_stat)"
	# Each report: "TASK: page allocation failure: order:N, mode:0x...(FLAGS), ..." and its
	# stack; the first frame past the allocator and the warning itself names the caller.
	awk '
		/page allocation failure/ {
			sub(/^\[[^]]*\] */, "")
			head = $0
			want = 1
			next
		}
		want && /^\[[^]]*\] +[a-z_0-9.]+\+0x/ {
			frame = $0
			sub(/^\[[^]]*\] +/, "", frame)
			sub(/\+0x.*/, "", frame)
			if (frame !~ /^(dump_backtrace|show_stack|dump_stack|warn_alloc|__alloc|alloc_pages|folio_alloc|__folio_alloc|__kmalloc|kmalloc|kmem_cache|___slab|__slab|allocate_slab|new_slab|get_page_from|__alloc_frozen|alloc_frozen|alloc_slab|refill_obj|__kmem)/) {
				print "# " head " <- " frame
				want = 0
			}
		}' /tmp/round.log
	sed 's/^/# /' /tmp/memfill.out
	ktap_print_msg "round $round, $driver: memfill exit $rc"
	check "round $round, $driver: memfill found no page read back differently" test $rc != 1
	check "round $round, $driver: swapoff and unload" eval "swapoff /dev/zram0 && rmmod $driver"
done
finish
