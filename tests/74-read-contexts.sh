#!/bin/bash
# Reads never wait behind compression (zram_rs only): an algorithm's decompression contexts are
# apart from its compression streams, one of each per CPU, so that while writers compress at
# zstd's level 22 on every vCPU, as many readers read compressed pages without once finding
# every decompression context lent out (read_stat, a zram_rs extension, counts the reads that
# did), and read back what was written. read_stat's mode, format and reset; on a lockdep kernel,
# the contexts' lock class. The property shows where readers preempt writers (7.3's lazy
# preemption, the debug kernel's full one): on a kernel without preemption (the 6.12 test
# kernel) a reader cannot run on a CPU while a writer compresses there, so even reads that
# shared the writers' streams would find one free.
. "$(dirname "$0")/lib.sh"
plan $((11 + UNLOAD_CASES))

zram_load
z=$(sysblock 0)
dev=/dev/zram0
cpus=$(nproc)
# A device's reads and writes completed (the block layer's stat, fields 1 and 5).
ios() { awk '{ print $1, $5 }' $z/stat; }

check_eq "mode of read_stat" 444 "$(stat -c %a $z/read_stat)"
check_eq "read_stat before initialisation" "       0" "$(cat $z/read_stat)"

echo zstd >$z/comp_algorithm
check_eq "zstd at level 22" OK "$(write_attr $z/algorithm_params "algo=zstd level=22")"
echo 128M >$z/disksize
# 32 MiB of compressible text for the readers, written before they start.
yes "zram_rs reads that never wait behind compression, line after line" | head -c $((32 << 20)) >/tmp/text
dd if=/tmp/text of=$dev bs=1M oflag=direct 2>/dev/null
check_eq "read_stat after the writes" "       0" "$(cat $z/read_stat)"

# As many writers as vCPUs compress random 4 KiB writes (60 % compressible) past the text, and
# as many readers read the text's pages at random, for 10 s.
read -r reads0 writes0 < <(ios)
fio --filename=$dev --direct=1 --bs=$PAGE --time_based --runtime=10 --numjobs=$cpus \
	--name=writers --rw=randwrite --offset=32M --size=96M --buffer_compress_percentage=60 \
	--refill_buffers \
	--name=readers --rw=randread --offset=0 --size=32M \
	--output=/tmp/fio.out >/dev/null 2>&1
rc=$?
check_eq "fio: $cpus writers at zstd level 22 beside $cpus readers" 0 $rc
[ $rc = 0 ] || tail -20 /tmp/fio.out | sed 's/^/# /'
read -r reads1 writes1 < <(ios)
reads=$((reads1 - reads0)) writes=$((writes1 - writes0))
ktap_print_msg "$reads page reads and $writes page writes in 10 s (TCG); mm_stat $(cat $z/mm_stat)"
check "the readers read (>= 100 reads: $reads)" test $reads -ge 100
check "the writers wrote (>= 10 writes: $writes)" test $writes -ge 10
check_eq "no read waited for a decompression context" "       0" "$(cat $z/read_stat)"
check_eq "the readers' pages read back as written" same "$(reads_as $dev $(((32 << 20) / PAGE)) /tmp/text)"

# On a lockdep kernel (the debug run), the decompression contexts' places are a lock class of
# their own, checked against every other lock (the VM fails the run on any report).
if [ -e /proc/lockdep ]; then
	check "lockdep knows the lock class \"zram_rs reader\"" grep -q "zram_rs reader" /proc/lockdep
else
	ktap_test_skip "lockdep knows the lock class \"zram_rs reader\" (no lockdep in this kernel)"
fi

# More readers than contexts (four per vCPU) may find every context lent out, when a holder is
# preempted in its decompression: shown, not asserted (how often depends on the scheduler).
fio --filename=$dev --direct=1 --bs=$PAGE --time_based --runtime=5 --numjobs=$((4 * cpus)) \
	--name=crowd --rw=randread --offset=0 --size=32M --output=/tmp/fio.out >/dev/null 2>&1
ktap_print_msg "with $((4 * cpus)) readers for 5 s: read_stat $(cat $z/read_stat)"
echo 1 >$z/reset
check_eq "reset zeroes read_stat" "       0" "$(cat $z/read_stat)"

zram_unload
finish
