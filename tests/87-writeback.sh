#!/bin/bash
# Writeback to a backing device, with C zram in the same boot as the oracle: one scenario runs
# against C zram.ko and then zram_rs.ko, each with the VM's virtio disk (/dev/vda; a loop
# device over a file in tmpfs for the full-device case), and
# prints one line per step (what a write answered, backing_dev, bd_stat, the mm_stat fields
# that do not depend on the allocator, and whether the whole disk still reads back as written).
# The transcripts must match line for line; zram_rs's must also show every read-back intact.
# Steps: backing_dev's errors (missing path, a regular file, a device another zram device
# holds, set once initialised), writeback before initialisation and without a backing device,
# `huge`, `idle` after `idle all`, `page_index=` (and on 7.3 its `key=value` forms; 6.12
# refuses them as C does), overwrites and discards of written-back pages, the writeback
# budget (`writeback_limit_enable`, `writeback_limit`, EIO when spent), a full device
# (ENOSPC), and reset; debugfs block_state after each stage (without its time column). On 7.3 the transcript also takes `writeback_batch_size` (C 6.12 has no
# such attribute; zram_rs has it on 6.12 too, checked below against C 7.3's answers), and the
# writebacks after `idle all` run one page at a time (batch size 1) while the others run with
# the default 32 in flight.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# Transcript lines of the scenario (each one a case), plus the checks below.
LINES=$((57 + 19 * ABI_7_3))
BATCH_CASES=$((8 + 2 * ABI_7_3))
PIECES_CASES=$((3 + 3 * ABI_7_3))
plan $((LINES + 10 + 3 + BATCH_CASES + PIECES_CASES + UNLOAD_CASES))

pages=96
pattern=/tmp/wb.pattern
expected=/tmp/wb.expected
# Page i: random (stored huge) when i % 4 == 0, text (compressible) when 1 or 3, zeroes when 2.
: >$pattern
for i in $(seq 0 $((pages - 1))); do
	case $((i % 4)) in
	0) head -c "$PAGE" /dev/urandom ;;
	2) head -c "$PAGE" /dev/zero ;;
	*) yes "zram writeback page $i of $pages" | head -c "$PAGE" ;;
	esac >>$pattern
done
head -c $((8 * PAGE)) /dev/urandom >/tmp/wb.new

# The backing devices: the virtio disk, and a loop device of 4 blocks for the full-device case
# (a regular file, for backing_dev's ENOTBLK).
truncate -s $((4 * pages * PAGE)) /tmp/wb.img
truncate -s $((4 * PAGE)) /tmp/wb-small.img
losetup /dev/loop1 /tmp/wb-small.img

# scenario MODULE: the steps, one line each.
scenario() {
	local m=$1 z=/sys/block/zram0 dev=/dev/zram0 mm
	modprobe "$m" num_devices=2 || return
	line() { echo "$1 -> $2"; }
	# orig_data_size compr_data_size same_pages huge_pages
	mmf() {
		read -r -a mm <$z/mm_stat
		echo "${mm[0]} ${mm[1]} ${mm[5]} ${mm[7]}"
	}
	# debugfs block_state, compared through block_state_summary (without its time column).
	bs=/sys/kernel/debug/zram/zram0/block_state
	cp $pattern $expected
	line "modes" "$(stat -c %a $z/backing_dev $z/writeback $z/writeback_limit $z/writeback_limit_enable $z/bd_stat | tr '\n' ' ')"
	line "uninit backing_dev" "$(cat $z/backing_dev)"
	line "uninit bd_stat" "$(cat $z/bd_stat)"
	line "uninit block_state" "$(stat -c %a $bs) $(block_state_summary)"
	line "uninit writeback idle" "$(write_attr $z/writeback idle)"
	line "uninit writeback garbage" "$(write_attr $z/writeback garbage)"
	line "backing_dev missing" "$(write_attr $z/backing_dev /nonexistent)"
	line "backing_dev regular file" "$(write_attr $z/backing_dev /tmp/wb.img)"
	# (A write of no bytes never reaches a sysfs store: a lone newline is the empty name.)
	line "backing_dev empty" "$(write_attr $z/backing_dev $'\n')"
	line "backing_dev vda" "$(write_attr $z/backing_dev $'/dev/vda\n')"
	line "read backing_dev" "$(cat $z/backing_dev)"
	line "zram1 backing_dev vda (held)" "$(write_attr /sys/block/zram1/backing_dev /dev/vda)"
	line "zram1 disksize" "$(write_attr /sys/block/zram1/disksize 1M)"
	line "zram1 writeback without a backing device" "$(write_attr /sys/block/zram1/writeback huge)"
	line "disksize" "$(write_attr $z/disksize $((pages * PAGE)))"
	line "init backing_dev" "$(write_attr $z/backing_dev /dev/vda)"
	dd if=$pattern of=$dev bs="$PAGE" oflag=direct 2>/dev/null
	line "written: mm" "$(mmf)"
	line "written: bd_stat" "$(cat $z/bd_stat)"
	line "written: block_state" "$(block_state_summary)"
	line "writeback huge" "$(write_attr $z/writeback huge)"
	line "huge: mm" "$(mmf)"
	line "huge: bd_stat" "$(cat $z/bd_stat)"
	line "huge: data" "$(reads_as $dev $pages $expected)"
	line "huge: block_state" "$(block_state_summary)"
	line "huge: bd_stat after reading" "$(cat $z/bd_stat)"
	line "writeback page_index past the end" "$(write_attr $z/writeback page_index=$pages)"
	line "writeback page_index=-1" "$(write_attr $z/writeback page_index=-1)"
	line "writeback page_index=1" "$(write_attr $z/writeback page_index=1)"
	line "writeback page_index=1 page_index=3" "$(write_attr $z/writeback 'page_index=1 page_index=3')"
	line "writeback page_indexes=5-7" "$(write_attr $z/writeback page_indexes=5-7)"
	line "writeback type=huge_idle" "$(write_attr $z/writeback type=huge_idle)"
	line "writeback incompressible" "$(write_attr $z/writeback incompressible)"
	line "page_index: bd_stat" "$(cat $z/bd_stat)"
	# writeback_batch_size (C 7.3's); the next writebacks run one page at a time.
	batch_size() {
		[ "$ABI_7_3" = 1 ] || return 0
		line "writeback_batch_size" "$(stat -c %a $z/writeback_batch_size) $(cat $z/writeback_batch_size)"
		line "writeback_batch_size 0" "$(write_attr $z/writeback_batch_size 0)"
		line "writeback_batch_size x" "$(write_attr $z/writeback_batch_size x)"
		line "writeback_batch_size 2^32" "$(write_attr $z/writeback_batch_size 4294967296)"
		line "writeback_batch_size 1" "$(write_attr $z/writeback_batch_size 1)"
		line "read writeback_batch_size" "$(cat $z/writeback_batch_size)"
	}
	batch_size
	[ ! -e $z/writeback_batch_size ] || echo 1 >$z/writeback_batch_size
	line "idle all" "$(write_attr $z/idle all)"
	line "writeback idle" "$(write_attr $z/writeback idle)"
	line "idle: mm" "$(mmf)"
	line "idle: bd_stat" "$(cat $z/bd_stat)"
	line "idle: data" "$(reads_as $dev $pages $expected)"
	line "idle: block_state" "$(block_state_summary)"
	# Reads of 100 bytes: whole lines that fit with a byte to spare (2), the position
	# counting slots.
	line "block_state in 100-byte reads" "$(dd if=$bs bs=100 count=3 2>/dev/null | awk '{ print $1, $3 }' | tr '\n' ,)"
	# Overwrite pages 8-11 and discard pages 16-23: their blocks come back.
	dd if=/tmp/wb.new of=$dev bs="$PAGE" seek=8 count=4 oflag=direct conv=notrunc 2>/dev/null
	dd if=/tmp/wb.new of=$expected bs="$PAGE" seek=8 count=4 conv=notrunc 2>/dev/null
	blkdiscard -o $((16 * PAGE)) -l $((8 * PAGE)) $dev
	dd if=/dev/zero of=$expected bs="$PAGE" seek=16 count=8 conv=notrunc 2>/dev/null
	line "overwritten and discarded: bd_stat" "$(cat $z/bd_stat)"
	line "overwritten and discarded: data" "$(reads_as $dev $pages $expected)"
	line "overwritten and discarded: block_state" "$(block_state_summary)"
	# The budget: none left stops with EIO before any page; 2 pages' worth writes back 2.
	line "writeback_limit_enable 1" "$(write_attr $z/writeback_limit_enable 1)"
	line "writeback_limit bad" "$(write_attr $z/writeback_limit x)"
	line "read limits" "$(cat $z/writeback_limit_enable) $(cat $z/writeback_limit)"
	line "idle all again" "$(write_attr $z/idle all)"
	line "writeback idle, budget 0" "$(write_attr $z/writeback idle)"
	line "writeback_limit 2 pages" "$(write_attr $z/writeback_limit $((2 * PAGE / 4096)))"
	line "writeback idle, budget 2 pages" "$(write_attr $z/writeback idle)"
	line "budget: bd_stat, limit" "$(cat $z/bd_stat) $(cat $z/writeback_limit)"
	line "budget: data" "$(reads_as $dev $pages $expected)"
	[ ! -e $z/writeback_batch_size ] || echo 32 >$z/writeback_batch_size
	line "reset" "$(write_attr $z/reset 1)"
	line "reset: backing_dev, bd_stat, limits" "$(cat $z/backing_dev) $(cat $z/bd_stat) $(cat $z/writeback_limit_enable) $(cat $z/writeback_limit)"
	# A full device: 4 blocks (3 usable on 6.12, whose block 0 stays unused).
	echo 0 >$z/writeback_limit_enable
	echo /dev/loop1 >$z/backing_dev
	echo $((pages * PAGE)) >$z/disksize
	dd if=$pattern of=$dev bs="$PAGE" oflag=direct 2>/dev/null
	line "full device: writeback huge" "$(write_attr $z/writeback huge)"
	line "full device: bd_stat" "$(cat $z/bd_stat)"
	cp $pattern $expected
	line "full device: data" "$(reads_as $dev $pages $expected)"
	echo 1 >$z/reset
	echo 1 >/sys/block/zram1/reset
	compressed
}

# failing_reads DEV PAGES: how many reads of one page fail, for each page number mod 4.
failing_reads() {
	local i n=(0 0 0 0)
	for i in $(seq 0 $(($2 - 1))); do
		dd if="$1" of=/dev/null bs="$PAGE" skip="$i" count=1 iflag=direct 2>/dev/null ||
			n[i % 4]=$((n[i % 4] + 1))
	done
	echo "${n[*]}"
}

# compressed (7.3): compressed_writeback's answers, then the pages written back as their
# compressed objects (the backing device's blocks hold fewer copies of the text than a plain
# writeback leaves), read back whole, then read again after the backing device's blocks were
# overwritten.
compressed() {
	[ "$ABI_7_3" = 1 ] || return 0
	line "compressed_writeback" "$(stat -c %a $z/compressed_writeback) $(cat $z/compressed_writeback)"
	line "compressed_writeback x" "$(write_attr $z/compressed_writeback x)"
	line "compressed_writeback on" "$(write_attr $z/compressed_writeback on)"
	line "read compressed_writeback" "$(cat $z/compressed_writeback)"
	dd if=/dev/zero of=/dev/vda bs="$PAGE" count=$((pages + 1)) oflag=direct 2>/dev/null
	echo /dev/vda >$z/backing_dev
	echo $((pages * PAGE)) >$z/disksize
	line "compressed_writeback once initialised" "$(write_attr $z/compressed_writeback 0)"
	dd if=$pattern of=$dev bs="$PAGE" oflag=direct 2>/dev/null
	cp $pattern $expected
	line "compressed: idle all, writeback idle" "$(write_attr $z/idle all) $(write_attr $z/writeback idle)"
	line "compressed: bd_stat, mm" "$(cat $z/bd_stat) $(mmf)"
	line "compressed: copies of the text on the backing device" \
		"$(dd if=/dev/vda bs="$PAGE" count=$((pages + 1)) iflag=direct 2>/dev/null | grep -a -o 'zram writeback page' | wc -l)"
	line "compressed: data" "$(reads_as $dev $pages $expected)"
	line "compressed: bd_stat after reading" "$(cat $z/bd_stat)"
	# The backing device's blocks overwritten with 0xff bytes: each page written back
	# compressed no longer decompresses and its read fails (EIO) alone; the huge pages, written
	# back as they were, read the new bytes; the zero pages were never written back.
	tr '\0' '\377' </dev/zero | head -c $(((pages + 1) * PAGE)) |
		dd of=/dev/vda bs="$PAGE" iflag=fullblock oflag=direct 2>/dev/null
	echo "zram_rs-test: expect io-error begin" >/dev/kmsg
	line "compressed, blocks overwritten: reads that fail, by page number mod 4" "$(failing_reads $dev $pages)"
	echo "zram_rs-test: expect io-error end" >/dev/kmsg
	line "compressed, blocks overwritten: io_stat" "$(cat $z/io_stat)"
	echo 1 >$z/reset
	line "compressed_writeback after reset" "$(cat $z/compressed_writeback)"
	echo 0 >$z/compressed_writeback
}

against_c wb $LINES
# Both drivers wrote pages back (a line missing or a writeback failing the same way on both would
# test nothing).
wrote_back() { awk '/^idle: bd_stat -> / { found = 1; ok = $6 > 0 } END { exit !(found && ok) }' "$1"; }
check "C zram wrote pages back (bd_stat counted writes)" wrote_back /tmp/wb.c
check "zram_rs wrote pages back (bd_stat counted writes)" wrote_back /tmp/wb.rs
check "C zram's transcript: initialised, writeback huge OK, the data read back after each step" \
	eval "grep -qx 'disksize -> OK' /tmp/wb.c && grep -qx 'writeback huge -> OK' /tmp/wb.c && [ \$(grep -c ': data -> same$' /tmp/wb.c) -ge 5 ]"
# writeback_batch_size on zram_rs (on 6.12 too, where C has none): C 7.3's answers, kept
# across reset as C's; then the same writeback of 2048 pages one at a time and 64 in flight
# ends with the same blocks in use and every page intact.
z=/sys/block/zram0
check_eq "writeback_batch_size: mode and default as C 7.3" "644 32" \
	"$(stat -c %a $z/writeback_batch_size) $(cat $z/writeback_batch_size)"
for bad in 0 x 4294967296 -1; do
	check_eq "writeback_batch_size $bad: EINVAL as C 7.3" "Invalid argument" \
		"$(write_attr $z/writeback_batch_size $bad)"
done
write_attr $z/writeback_batch_size 5 >/dev/null
echo 1 >$z/reset
check_eq "writeback_batch_size 5 kept across reset" 5 "$(cat $z/writeback_batch_size)"
batch_pages=2048
head -c $((batch_pages * PAGE / 2)) /dev/urandom >/tmp/wb.batch
yes "batched writeback" | head -c $((batch_pages * PAGE / 2)) >>/tmp/wb.batch
batched() {
	echo "$1" >$z/writeback_batch_size
	echo /dev/vda >$z/backing_dev
	echo $((batch_pages * PAGE)) >$z/disksize
	dd if=/tmp/wb.batch of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	echo all >$z/idle
	echo "$(write_attr $z/writeback idle) $(cat $z/bd_stat)"
	cmp -s <(dd if=/dev/zram0 bs="$PAGE" iflag=direct 2>/dev/null) /tmp/wb.batch && echo intact
	echo 1 >$z/reset
}
one=$(batched 1)
many=$(batched 64)
check_eq "writeback idle of $batch_pages pages, 64 in flight, as one at a time (answer, bd_stat)" \
	"$(echo "$one" | head -n 1)" "$(echo "$many" | head -n 1)"
check_eq "every page read back after each" "intact intact" \
	"$(echo "$one" | tail -n 1) $(echo "$many" | tail -n 1)"
if [ "$ABI_7_3" = 1 ]; then
	echo 1 >$z/compressed_writeback
	compressed=$(batched 32)
	echo 0 >$z/compressed_writeback
	check_eq "the same, written back compressed (answer, bd_stat)" \
		"$(echo "$one" | head -n 1)" "$(echo "$compressed" | head -n 1)"
	check_eq "every page read back from compressed blocks" intact "$(echo "$compressed" | tail -n 1)"
fi
echo 32 >$z/writeback_batch_size

# Pieces of written-back pages: fio writes 1 MiB with verify headers from buffers 512 bytes
# into a page, so that every 4 KiB block arrives in two pieces straddling memory pages; the
# pages go to the backing device; fio verifies them through such pieces (reads of parts of
# written-back pages, which wait for the device), then rewrites and verifies them the same way
# (read-modify-write of written-back pages). On 7.3 also with compressed_writeback, over
# half-compressible data written back as idle pages (parts of decompressed blocks).
pieces() {
	local how=$1 mode=huge data=()
	if [ "$how" = compressed ]; then
		echo 1 >$z/compressed_writeback
		mode=idle
		data=(--buffer_compress_percentage=50 --refill_buffers)
	fi
	echo /dev/vda >$z/backing_dev
	echo 4M >$z/disksize
	unaligned=(--name=pieces --filename=/dev/zram0 --direct=1 --bs=4k --size=1M --iomem_align=512
		--verify=crc32c --verify_fatal=1 --output=/tmp/fio-wb.out "${data[@]}")
	fio "${unaligned[@]}" --rw=write --do_verify=0 >/dev/null 2>&1
	echo all >$z/idle
	echo $mode >$z/writeback
	read -r -a bd <$z/bd_stat
	check "1 MiB of fio data written back, $how (bd_stat: ${bd[*]})" test "${bd[0]}" -ge $((1024 / 4))
	fio "${unaligned[@]}" --rw=read --verify_only=1 >/dev/null 2>&1
	check "fio verifies the written-back pages through straddling pieces, $how" test $? = 0
	echo all >$z/idle
	echo $mode >$z/writeback
	fio "${unaligned[@]}" --rw=write --do_verify=1 --verify_pattern=0x5a5a1234 >/dev/null 2>&1
	check "fio rewrites written-back pages through pieces (read-modify-write) and verifies, $how" test $? = 0
	echo 1 >$z/reset
	[ "$how" != compressed ] || echo 0 >$z/compressed_writeback
}
pieces plain
[ "$ABI_7_3" = 0 ] || pieces compressed

# reset and hot_remove while a writeback runs: they wait for it; each writeback answers OK (it
# ran) or EINVAL (the device was already reset); the device ends uninitialised without its
# backing device, the other is gone, and nothing leaks (kmemleak at unload, debug kernel).
race_pages=256
head -c $((race_pages * PAGE)) /dev/urandom >/tmp/wb.race-data
truncate -s $((2 * race_pages * PAGE)) /tmp/wb-race.img
losetup /dev/loop0 /tmp/wb-race.img
# zram0 writes back to the throttled disk (about two seconds of writes): the reset comes while
# its writeback runs.
echo /dev/vdd >/sys/block/zram0/backing_dev
echo /dev/loop0 >/sys/block/zram1/backing_dev
for id in 0 1; do
	echo $((race_pages * PAGE)) >/sys/block/zram$id/disksize
	dd if=/tmp/wb.race-data of=/dev/zram$id bs="$PAGE" oflag=direct 2>/dev/null
done
write_attr /sys/block/zram0/writeback huge >/tmp/wb.race0 &
w0=$!
write_attr /sys/block/zram1/writeback huge >/tmp/wb.race1 &
w1=$!
sleep 0.5
t0=$EPOCHREALTIME
reset=$(write_attr /sys/block/zram0/reset 1)
t1=$EPOCHREALTIME
removed=$(write_attr /sys/class/zram-control/hot_remove 1)
wait $w0 $w1
check_eq "reset during a writeback" OK "$reset"
# The race happened: the reset waited for the writeback under way (which holds init_lock).
check "the reset waited for the writeback under way ($(((${t1/./} - ${t0/./}) / 1000)) ms)" \
	test $((${t1/./} - ${t0/./})) -gt 20000
check_eq "hot_remove during a writeback" OK "$removed"
answered() { grep -qxE 'OK|Invalid argument' /tmp/wb.race0 && grep -qxE 'OK|Invalid argument' /tmp/wb.race1; }
check "the writebacks answered OK or EINVAL" answered
check_eq "after the race: zram0 uninitialised without a backing device, zram1 gone" \
	"0 none absent" "$(cat /sys/block/zram0/initstate) $(cat /sys/block/zram0/backing_dev) $([ -e /sys/block/zram1 ] && echo present || echo absent)"
# hot_remove of a device whose reset is waiting for a writeback: the reset holds the disk's
# claim, which hot_remove sleeps on until the reset's end wakes it; then the device goes (C:
# del_gendisk waits for the reset's write). Both answer OK.
echo /dev/vdd >/sys/block/zram0/backing_dev
echo $((race_pages * PAGE)) >/sys/block/zram0/disksize
dd if=/tmp/wb.race-data of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
write_attr /sys/block/zram0/writeback huge >/tmp/wb.race0 &
w0=$!
sleep 0.5
write_attr /sys/block/zram0/reset 1 >/tmp/wb.reset0 &
r0=$!
sleep 0.5
t0=$EPOCHREALTIME
removed=$(write_attr /sys/class/zram-control/hot_remove 0)
t1=$EPOCHREALTIME
wait $w0 $r0
check_eq "hot_remove while a reset waits for a writeback, and the reset" "OK OK" \
	"$removed $(cat /tmp/wb.reset0)"
check "hot_remove waited for the reset ($(((${t1/./} - ${t0/./}) / 1000)) ms), and zram0 is gone" \
	test $((${t1/./} - ${t0/./})) -gt 20000 -a ! -e /sys/block/zram0
losetup -d /dev/loop0
losetup -d /dev/loop1
zram_unload
finish
