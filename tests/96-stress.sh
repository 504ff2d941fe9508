#!/bin/bash
# Stress: fio with verification over zero, same-filled, compressible and random buffers,
# sequential and random, two jobs at once, with discards interleaved; then swap under real
# memory pressure: memfill (tools/memfill.c) keeps more than the guest's RAM in anonymous
# memory, page kinds mixed, and checks every page.
. "$(dirname "$0")/lib.sh"

zram_load
z=$(sysblock 0)
dev=/dev/zram0
echo 512M >$z/disksize

# run_fio NAME ARGS...: one verified fio run over two 64 MiB regions, one per job.
run_fio() {
	local name=$1
	shift
	fio --name="$name" --filename=$dev --direct=1 --bs=4k --size=64M --numjobs=2 \
		--offset_increment=128M --group_reporting --verify_fatal=1 "$@" \
		--output=/tmp/fio.out >/dev/null 2>&1
	local rc=$?
	check "fio $name" test $rc = 0
	[ $rc = 0 ] || tail -20 /tmp/fio.out | sed 's/^/# /'
	grep -E 'WRITE:|READ:' /tmp/fio.out | sed 's/^ */# /'
}
run_fio zero-seq --rw=write --verify=pattern --verify_pattern=0x00
run_fio same-random --rw=randwrite --verify=pattern --verify_pattern=0x0df0fecaefbeadde
check_eq "the same-filled run stored same pages only" "$(($(field 1 $z/mm_stat) / PAGE))" "$(field 6 $z/mm_stat)"
run_fio compressible-random --rw=randwrite --buffer_compress_percentage=60 --refill_buffers --verify=crc32c
run_fio random-seq --rw=write --refill_buffers --verify=crc32c
# Verified writers on two regions while a third job discards a region between them.
fio --direct=1 --bs=4k --filename=$dev --verify_fatal=1 --group_reporting \
	--name=writer --rw=randwrite --size=64M --numjobs=2 --offset_increment=128M \
	--buffer_compress_percentage=40 --refill_buffers --verify=crc32c \
	--name=discarder --rw=randtrim --offset=64M --size=64M --loops=4 \
	--output=/tmp/fio.out >/dev/null 2>&1
rc=$?
check "fio verified writers beside a discarding job" test $rc = 0
[ $rc = 0 ] || tail -20 /tmp/fio.out | sed 's/^/# /'
check_eq "no failed reads or writes" "0 0" "$(field 1 $z/io_stat) $(field 2 $z/io_stat)"
check "discards freed pages" test "$(field 4 $z/io_stat)" -gt 0

# Swap under memory pressure.
echo 1 >$z/reset
echo 2G >$z/disksize
mkswap $dev >/dev/null
swapon $dev
ram_mib=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)
size=$((ram_mib + 128))
memfill $size 1 >/tmp/memfill.out 2>&1
rc=$?
sed 's/^/# /' /tmp/memfill.out
check "memfill: $size MiB (RAM $ram_mib MiB) of mixed pages, all verified" test $rc = 0
ktap_print_msg "mm_stat after memfill: $(cat $z/mm_stat); same_stat: $(cat $z/same_stat)"
check "swap held non-zero same pages" test "$(field 2 $z/same_stat)" -gt 0
check "swap held huge pages" test "$(field 9 $z/mm_stat)" -gt 0
check "swapoff" swapoff $dev
check_eq "every slot freed but the header" $PAGE "$(field 1 $z/mm_stat)"

rm -f /tmp/fio.out /tmp/memfill.out
zram_unload
finish
