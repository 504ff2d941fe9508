#!/bin/bash
# Swap on zram_rs: mkswap + swapon, a workload pushed into swap by a memory cgroup limit,
# every byte verified while swapped and after swapoff against digests of the data taken before
# it reached the tmpfs (and so the swap), the pages freed again, no failed I/O.
. "$(dirname "$0")/lib.sh"
plan $((12 + UNLOAD_CASES))

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
zram_unload
finish
