#!/bin/sh
# The demo `make run` boots: load zram_rs as users do, make /dev/zram0 a swap device, push a
# workload larger than the guest's RAM into swap, show mm_stat, verify the data, and tear
# everything down again.
set -e
step() { echo; echo "== $*"; }

step "modprobe zram_rs"
modprobe zram_rs
grep -E ' zram$' /proc/devices
ls -l /dev/zram0 /sys/class/zram-control

step "echo 1G > /sys/block/zram0/disksize; mkswap; swapon"
echo 1G >/sys/block/zram0/disksize
mkswap /dev/zram0
swapon /dev/zram0
cat /proc/swaps

ram_mb=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)
step "workload: 640 MiB kept in a tmpfs, more than the guest's $ram_mb MiB of RAM"
mkdir -p /mnt/work
mount -t tmpfs -o size=1G tmpfs /mnt/work
i=0
while [ $i -lt 72 ]; do
	yes "page $i: zram_rs keeps this text in compressed memory" | head -c $((8 << 20)) >/mnt/work/text.$i
	i=$((i + 1))
done
dd if=/dev/urandom of=/mnt/work/random bs=1M count=64 2>/dev/null
sha256sum /mnt/work/* >/tmp/sums
du -sm /mnt/work
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
umount /mnt/work
swapoff /dev/zram0
echo 1 >/sys/block/zram0/reset
rmmod zram_rs
echo "done"
