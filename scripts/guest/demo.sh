#!/bin/sh
# The demo `make run` boots: load zram_rs as users do, make /dev/zram0 a swap device, push a
# workload into swap, show mm_stat, verify the data, and tear everything down again.
set -e
step() { echo; echo "== $*"; }

step "modprobe zram_rs"
modprobe zram_rs
grep -E ' zram$' /proc/devices
ls -l /dev/zram0 /sys/class/zram-control

step "echo 512M > /sys/block/zram0/disksize; mkswap; swapon"
echo 512M >/sys/block/zram0/disksize
mkswap /dev/zram0
swapon /dev/zram0
cat /proc/swaps

step "workload: 160 MiB kept in a tmpfs by a process whose memory cgroup may use 64 MiB"
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/demo /mnt/work
echo 64M >/sys/fs/cgroup/demo/memory.max
mount -t tmpfs -o size=400M tmpfs /mnt/work
sh -c '
	echo $$ > /sys/fs/cgroup/demo/cgroup.procs
	i=0
	while [ $i -lt 80 ]; do
		dd if=/dev/urandom bs=1M count=1 2>/dev/null > /mnt/work/random.$i
		yes "page $i: zram_rs keeps this text in compressed memory" | head -c 1048576 > /mnt/work/text.$i
		i=$((i + 1))
	done
	sha256sum /mnt/work/* > /tmp/sums
'
free -m
cat /proc/swaps

step "cat /sys/block/zram0/mm_stat"
echo "orig_data_size compr_data_size mem_used_total mem_limit mem_used_max same_pages pages_compacted huge_pages huge_pages_since"
cat /sys/block/zram0/mm_stat
echo "io_stat (failed_reads failed_writes invalid_io notify_free):"
cat /sys/block/zram0/io_stat

step "verify the workload's data (swapped back in as it is read)"
sha256sum -c /tmp/sums >/dev/null && echo "all $(wc -l </tmp/sums) files intact"

step "swapoff, reset, rmmod"
echo max >/sys/fs/cgroup/demo/memory.max
umount /mnt/work
swapoff /dev/zram0
echo 1 >/sys/block/zram0/reset
rmmod zram_rs
echo "done"
