#!/bin/bash
# Post-processing (writeback and recompression) under real workloads, every byte verified: fio
# writing and verifying the whole disk while a loop marks pages idle and, in turn, writes them
# back (idle, huge), recompresses them with zstd (type=idle, type=huge) and writes one back by
# page_index; swap pushed past a memory cgroup's limit while the same loop runs; ext4 whose
# blocks are written back between writes, checked by e2fsck. The backing device is the VM's
# virtio disk.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
plan $((17 + UNLOAD_CASES))
# Where C zram of this kernel has no recompression (Debian's), neither has zram_rs: the loops
# only write back, and the recompression cases are skipped.
c_algorithms

zram_load
z=$(sysblock 0)
dev=/dev/zram0

# post_processing_loop SECONDS: marks pages idle and, in turn, writes them back (idle, huge),
# recompresses them (idle, huge) and writes one back by index, until killed or SECONDS have
# passed. Each recompress write's answer goes to /tmp/wbw.recompress.
post_processing_loop() {
	local end=$((SECONDS + $1)) pages round=0
	pages=$(($(cat $z/disksize) / PAGE))
	while [ $SECONDS -lt $end ]; do
		round=$((round + 1))
		echo all >$z/idle 2>/dev/null
		case $((round % 3)) in
		0)
			echo idle >$z/writeback 2>/dev/null
			echo huge >$z/writeback 2>/dev/null
			;;
		1) [ "$MULTI_COMP" = 0 ] || write_attr $z/recompress type=idle >>/tmp/wbw.recompress ;;
		2)
			[ "$MULTI_COMP" = 0 ] || write_attr $z/recompress type=huge >>/tmp/wbw.recompress
			echo "page_index=$((RANDOM % pages))" >$z/writeback 2>/dev/null
			;;
		esac
		sleep 0.1
	done
}

# recompressions_ran WHAT: two cases: the loop's recompress writes all answered OK, and there
# were some.
recompressions_ran() {
	local answers
	if [ "$MULTI_COMP" = 0 ]; then
		ktap_test_skip "recompressions during $1 (no recompression in this kernel's zram)"
		ktap_test_skip "recompressions ran during $1 (no recompression in this kernel's zram)"
		return
	fi
	answers=$(sort /tmp/wbw.recompress | uniq -c | sed 's/^ *//' | tr '\n' ,)
	check_eq "every recompression during $1 answered OK ($answers)" OK \
		"$(sort -u /tmp/wbw.recompress | tr '\n' ' ' | sed 's/ $//')"
	check "recompressions ran during $1 ($(wc -l </tmp/wbw.recompress))" \
		test "$(wc -l </tmp/wbw.recompress)" -gt 2
	: >/tmp/wbw.recompress
}
: >/tmp/wbw.recompress

# 1. fio: random 4 KiB writes of half-compressible data with crc32c verify headers over the
# whole disk (each block four times over, twice on the debug kernel), verified as it goes (every
# 1024 writes) and once more at the end, while the loop runs.
echo /dev/vda >$z/backing_dev
[ "$MULTI_COMP" = 0 ] || echo algo=zstd >$z/recomp_algorithm
echo 32M >$z/disksize
post_processing_loop 600 &
loop=$!
fio --name=wb --filename=$dev --direct=1 --rw=randwrite --bs=4k --size=32M \
	--io_size=$((DEBUG_KERNEL ? 64 : 128))M \
	--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_fatal=1 \
	--verify_backlog=1024 --do_verify=1 --output=/tmp/wbw-fio.out >/dev/null 2>&1
rc=$?
fio --name=wb --filename=$dev --direct=1 --rw=randwrite --bs=4k --size=32M --io_size=64M \
	--verify=crc32c --verify_only=1 --verify_fatal=1 --output=/tmp/wbw-fio2.out >/dev/null 2>&1
rc2=$?
kill $loop 2>/dev/null
wait $loop 2>/dev/null
read -r -a bd <$z/bd_stat
ktap_print_msg "fio with post-processing: bd_stat ${bd[*]}; mm_stat $(cat $z/mm_stat)"
check_eq "fio writes and verifies while pages are written back and recompressed" 0 $rc
check_eq "fio verifies the whole disk afterwards" 0 $rc2
check "pages were written back and read back meanwhile (bd_stat: ${bd[*]})" \
	test "${bd[2]}" -gt 0 -a "${bd[1]}" -gt 0
recompressions_ran fio
check_eq "reset" OK "$(write_attr $z/reset 1)"

# 2. Swap: a workload in a cgroup whose memory.high is far below what it keeps in a tmpfs (as
# 50-swap), while the loop runs.
echo /dev/vda >$z/backing_dev
[ "$MULTI_COMP" = 0 ] || echo algo=zstd >$z/recomp_algorithm
echo 256M >$z/disksize
mkswap $dev >/dev/null
swapon $dev
cg=$(memory_cgroup zram_rs_wb memory.high 24M)
mkdir -p /mnt/wbswap
mount -t tmpfs -o size=200M tmpfs /mnt/wbswap
post_processing_loop 600 &
loop=$!
bash -c "
	echo \$\$ > $cg/cgroup.procs
	dd if=/dev/urandom bs=1M count=32 2>/dev/null | tee /mnt/wbswap/random |
		sha256sum | sed 's|-\$|/mnt/wbswap/random|' > /tmp/wbw.sums
	yes 'swapped out, then written back' | head -c \$((48 << 20)) | tee /mnt/wbswap/text |
		sha256sum | sed 's|-\$|/mnt/wbswap/text|' >> /tmp/wbw.sums
	sleep 3
"
used_kb=$(awk '$1 == "/dev/zram0" { print $4 }' /proc/swaps)
check "data intact while swapped, written back and recompressed" sha256sum -c --quiet /tmp/wbw.sums
kill $loop 2>/dev/null
wait $loop 2>/dev/null
read -r -a bd <$z/bd_stat
ktap_print_msg "swap with post-processing: swap used ${used_kb} kB, bd_stat ${bd[*]}"
check "swapped pages were written back (bd_stat: ${bd[*]})" test "${bd[2]}" -gt 0
recompressions_ran swap
echo max >$cg/memory.high
check "swapoff reads every page back" swapoff $dev
check "data intact after swapoff" sha256sum -c --quiet /tmp/wbw.sums
check "swapoff freed every block of the backing device but the swap header's" \
	test "$(field 1 $z/bd_stat)" -le $((PAGE / 4096))
check_io_ok "$z" "swap with writeback and recompression"
umount /mnt/wbswap
rmdir $cg
echo 1 >$z/reset

# 3. ext4: files written, their blocks written back, more files written over them, all read
# back with the page cache dropped (reads from the backing device), and e2fsck clean.
echo /dev/vda >$z/backing_dev
echo 128M >$z/disksize
mkfs.ext4 -q $dev
mkdir -p /mnt/wbfs
mount $dev /mnt/wbfs
: >/tmp/wbw.fs-sums
for i in 1 2 3 4; do
	head -c 4M /dev/urandom | tee /mnt/wbfs/random$i | sha256sum | sed "s|-\$|random$i|" >>/tmp/wbw.fs-sums
	yes "ext4 over written-back pages $i" | head -c 6M | tee /mnt/wbfs/text$i |
		sha256sum | sed "s|-\$|text$i|" >>/tmp/wbw.fs-sums
	sync
	echo all >$z/idle
	echo idle >$z/writeback
	echo 3 >/proc/sys/vm/drop_caches
done
umount /mnt/wbfs
echo all >$z/idle
echo idle >$z/writeback
mount $dev /mnt/wbfs
read -r -a bd <$z/bd_stat
check "ext4 blocks were written back (bd_stat: ${bd[*]})" test "${bd[0]}" -gt 0
check "files read back through written-back blocks" bash -c "cd /mnt/wbfs && sha256sum -c --quiet /tmp/wbw.fs-sums"
umount /mnt/wbfs
e2fsck -fn $dev >/tmp/wbw.fsck 2>&1
check_eq "e2fsck finds the filesystem clean" 0 $?
echo 1 >$z/reset
zram_unload
finish
