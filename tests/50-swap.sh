#!/bin/bash
# Swap on zram_rs: mkswap + swapon, a workload pushed into swap by a memory cgroup limit,
# every byte verified while swapped and after swapoff against digests of the data taken before
# it reached the tmpfs (and so the swap), the pages freed again, no failed I/O. Then the free
# that finds its slot locked: a small swap churned by memfill while four direct readers keep
# locking its slots, until miss_free counts such frees; every page memfill reads back is right
# and a missed slot stays stored (as in C) until its slot is written again.
. "$(dirname "$0")/lib.sh"
plan $((20 + UNLOAD_CASES))

zram_load
z=$(sysblock 0)
echo 256M >$z/disksize
check "mkswap" mkswap /dev/zram0
check "swapon" swapon /dev/zram0
check "listed in /proc/swaps" grep -q '^/dev/zram0 ' /proc/swaps

# A cgroup whose memory.high is far below what its workload keeps in a tmpfs: past it, the
# workload's own allocations reclaim (into swap) and are throttled. memory.max would OOM-kill
# the workload instead whenever reclaim falls behind a moment (seen on 16 KiB-page kernels under
# TCG with C zram.ko as well).
cg=$(memory_cgroup zram_rs_swap memory.high 24M)
mkdir -p /mnt/swapdata
mount -t tmpfs -o size=200M tmpfs /mnt/swapdata
bash -c "
	echo \$\$ > $cg/cgroup.procs
	dd if=/dev/urandom bs=1M count=48 2>/dev/null | tee /mnt/swapdata/random |
		sha256sum | sed 's|-\$|/mnt/swapdata/random|' > /tmp/sums
	yes 'a line of text that compresses well' | head -c \$((48 << 20)) | tee /mnt/swapdata/text |
		sha256sum | sed 's|-\$|/mnt/swapdata/text|' >> /tmp/sums
"
used_kb=$(awk '$1 == "/dev/zram0" { print $4 }' /proc/swaps)
ktap_print_msg "swap used: $used_kb kB; mm_stat: $(cat $z/mm_stat)"
check "the workload was swapped out (more than 40 MiB)" test "$used_kb" -gt $((40 * 1024))
check "mm_stat holds the swapped pages" test "$(field 1 $z/mm_stat)" -ge $((used_kb * 1024 - (4 << 20)))
check "data intact while swapped" sha256sum -c --quiet /tmp/sums

echo max >$cg/memory.high
check "swapoff" swapoff /dev/zram0
check "data intact after swapoff" sha256sum -c --quiet /tmp/sums
check_eq "swapoff freed every slot but the swap header (swap_slot_free_notify)" $PAGE "$(field 1 $z/mm_stat)"
check "notify_free counted the freed slots" test "$(field 4 $z/io_stat)" -gt 0
check_io_ok "$z" "swap"

umount /mnt/swapdata
rmdir $cg
rm -f /tmp/sums
check_eq "reset" OK "$(write_attr $z/reset 1)"

# miss_free: swap_slot_free_notify may not sleep, so a free that finds its slot locked (here by
# a reader decompressing it) is skipped and counted. memfill churns 16 MiB through a 12 MiB
# cgroup and an 8 MiB swap, freeing a slot at every swap-in, while fio's readers hold one slot
# lock each, again and again, until miss_free is seen (at most 90 s, 300 on the debug kernels).
# With one CPU a free meets a held slot lock only where the holder was preempted: rarely seen.
# debug_stat's second line: writestall (6.12) or 0 (7.3), then miss_free.
miss_free() { awk 'NR == 2 { print $2 }' $z/debug_stat; }
echo 8M >$z/disksize
mkswap /dev/zram0 >/dev/null
swapon /dev/zram0
cg=$(memory_cgroup zram_rs_swap memory.high 12M)
rounds=0 bad=0 broken=0 missed=0
if [ "$(nproc)" -ge 2 ]; then
	# Threads of one process, fio itself (not lib.sh's wrapper): killing it closes the disk.
	command fio --filename=/dev/zram0 --direct=1 --rw=randread --bs="$PAGE" --numjobs=4 \
		--thread --time_based --runtime=3600 --name=lockers --output=/tmp/fio.out >/dev/null 2>&1 &
	fio=$!
	limit=90
	[ "$DEBUG_KERNEL" = 0 ] || limit=300
	end=$((SECONDS + limit))
	: >/tmp/memfill.out
	while [ "$(miss_free)" = 0 ] && [ $SECONDS -lt $end ]; do
		# memfill: 0, or 1 for pages read back wrong; anything else (its own set-up, a signal,
		# the cgroup) is not about the data.
		bash -c "echo \$\$ >$cg/cgroup.procs && exec memfill 16 1" >/tmp/memfill.round 2>&1
		case $? in
		0) ;;
		1) bad=$((bad + 1)) && cat /tmp/memfill.round >>/tmp/memfill.out ;;
		*) broken=$((broken + 1)) && cat /tmp/memfill.round >>/tmp/memfill.out ;;
		esac
		rounds=$((rounds + 1))
	done
	kill $fio 2>/dev/null
	wait $fio
	fio_rc=$?
	missed=$(miss_free)
	ktap_print_msg "$rounds rounds of memfill; notify_free $(field 4 $z/io_stat), miss_free $missed"
	check "frees that found their slot locked were counted in miss_free ($rounds rounds)" \
		test "$missed" -gt 0 -a $rounds -ge 1
	check_eq "memfill read back every page it wrote, in every round" 0 $bad
	check_eq "memfill ran every round to its end" 0 $broken
	[ $((bad + broken)) = 0 ] || sed 's/^/# /' /tmp/memfill.out
	# fio ran until stopped (its exit status after SIGTERM is 128; an error would have ended it
	# before, with another) and each of its 4 jobs reports err= 0: no read of the swap device
	# failed under the swapping.
	check "the lockers read the swap device without an error until stopped (fio exit $fio_rc, $(grep -c 'err= 0:' /tmp/fio.out) of 4 jobs with err= 0)" \
		test "$fio_rc" = 128 -a "$(grep -c 'err= 0:' /tmp/fio.out)" = 4 -a "$(grep -c 'err=' /tmp/fio.out)" = 4
	[ "$(grep -c 'err= 0:' /tmp/fio.out)" = 4 ] || sed 's/^/# /' /tmp/fio.out | head -20
else
	for case in "frees that found their slot locked were counted in miss_free" \
		"memfill read back every page it wrote, in every round" "memfill ran every round to its end" \
		"the lockers read the swap device without an error until stopped"; do
		ktap_test_skip "$case (one CPU: a free meets a held slot lock only after a preemption)"
	done
fi
echo max >$cg/memory.high
check "swapoff" swapoff /dev/zram0
held=$(($(field 1 $z/mm_stat) / PAGE - 1))
check "after swapoff only the header and missed slots are stored ($held held, $missed missed)" \
	test $held -ge 0 -a $held -le "$missed"
check_io_ok "$z" "swap with missed frees"
rmdir $cg
rm -f /tmp/fio.out /tmp/memfill.out /tmp/memfill.round
check_eq "reset" OK "$(write_attr $z/reset 1)"
zram_unload
finish
