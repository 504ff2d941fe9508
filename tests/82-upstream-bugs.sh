#!/bin/bash
# C zram's own bugs, fixed upstream between 6.12 and 7.3, replayed against C zram.ko of the
# running kernel and zram_rs in the same boot (transcripts compared line for line; the kernel
# log is checked after the script, KASAN and lockdep included on the debug kernels). Each step
# is named after the upstream commit that fixed the bug (Documentation/zram_rs.rst lists them);
# Debian's 6.12.118 and 7.3.4 carry every fix that applies to them, so C is the oracle of the
# fixed behaviour. /dev/vdd is a disk QEMU throttles to 400 KiB of writes a second (a writeback
# to it runs for seconds).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
LINES=30
plan $((LINES + 2 + 1 + 3 + UNLOAD_CASES))

z=/sys/block/zram0
bs=/sys/kernel/debug/zram/zram0/block_state
line() { echo "$1 -> $2"; }
mm() { field "$1" $z/mm_stat; }
head -c $((500 * PAGE)) /dev/urandom >/tmp/ub.random
head -c $((100 * PAGE)) /tmp/ub.random >/tmp/ub.random100
yes "a page that compresses" | head -c $((16 * PAGE)) >/tmp/ub.text
truncate -s 0 /tmp/ub.empty.img
truncate -s 16M /tmp/ub.loop.img

# 1. "zram: fix slot write race condition": writers racing on the same few slots must not leak
# an object (a leaked handle keeps compr_data_size and the pool above zero after everything is
# discarded, and makes the pool's destruction complain), nor lose data: every job writes the
# same bytes to a page (a line of text with the page's offset), so whichever racing write lands
# last, each read must find them — the writers read back what they wrote (every 8 writes) and
# two readers read all along, fio checking each read and failing on any difference.
same_index() {
	local pattern='"racing writes of one page "%o' rc=0
	echo 16M >$z/disksize
	fio --name=fill --filename=/dev/zram0 --rw=write --bs=4k --size=64k --ioengine=psync \
		--direct=1 --verify=pattern --verify_pattern="$pattern" --do_verify=0 >/tmp/ub.fio 2>&1 &&
		fio --filename=/dev/zram0 --bs=4k --size=64k --ioengine=psync --direct=1 --runtime=8 \
			--time_based --verify=pattern --verify_pattern="$pattern" \
			--name=write --rw=randwrite --numjobs=4 --verify_backlog=8 \
			--name=read --rw=randread --numjobs=2 >/tmp/ub.fio 2>&1 || rc=$?
	line "slot write race: data" "$([ $rc = 0 ] && echo same || echo "DIFFERENT (fio exit $rc: $(grep -m1 -E 'verify|err=' /tmp/ub.fio))")"
	blkdiscard /dev/zram0
	echo 1 >$z/compact
	line "slot write race: after discarding everything, orig compr mem_used" "$(mm 1) $(mm 2) $(mm 3)"
	echo 1 >$z/reset
}

# 2. "zram: fix use-after-free in zram_writeback_endio": many single-page writebacks (200, 60 on
# the debug kernels), each completing while its writer returns (one request in flight where the
# kernel has the setting).
endio_rounds=$((DEBUG_KERNEL ? 60 : 200))
endio() {
	local i
	[ ! -e $z/writeback_batch_size ] || echo 1 >$z/writeback_batch_size
	echo /dev/vda >$z/backing_dev
	echo 1M >$z/disksize
	for i in $(seq 1 $endio_rounds); do
		dd if=/tmp/ub.random of=/dev/zram0 bs="$PAGE" count=1 skip=$((i % 500)) oflag=direct 2>/dev/null
		echo page_index=0 >$z/writeback
	done
	line "writeback endio: single-page writebacks, bd_stat" "$(cat $z/bd_stat)"
	line "writeback endio: data" "$(cmp -s <(dd if=/dev/zram0 bs="$PAGE" count=1 iflag=direct 2>/dev/null) <(dd if=/tmp/ub.random bs="$PAGE" skip=$((endio_rounds % 500)) count=1 2>/dev/null) && echo same || echo DIFFERENT)"
	echo 1 >$z/reset
	[ ! -e $z/writeback_batch_size ] || echo 32 >$z/writeback_batch_size
}

# 3. "zram: fix out-of-bounds access in writeback_store()" (and in read_block_state()): a
# writeback, a page_index writeback and a block_state read queued behind reset, backing_dev
# and a smaller disksize, themselves waiting for a long writeback, must use the new, smaller
# device's size.
# queued FILE ATTR VALUE: writes VALUE to ATTR in the background; FILE gets the answer and
# whether the write waited (over 0.3 s: queued behind the writeback). Sets $queued_pid.
queued() {
	(
		local t0=$EPOCHREALTIME answer
		answer=$(write_attr "$z/$2" "$3")
		echo "$answer $( [ $((${EPOCHREALTIME/./} - ${t0/./})) -gt 300000 ] && echo waited || echo "did not wait")" >"$1"
	) &
	queued_pid=$!
}
stale_size() {
	local pids=() a
	echo /dev/vdd >$z/backing_dev
	echo 64M >$z/disksize
	dd if=/tmp/ub.random of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	write_attr $z/writeback huge >/tmp/ub.wb0 &
	pids+=($!)
	sleep 1
	# Each queued behind the one before (half a second apart), all behind the writeback.
	queued /tmp/ub.q1 reset 1
	pids+=("$queued_pid")
	sleep 0.5
	# (another disk: C gives the reset's own back only when the resetting task returns to user
	# space, after a queued write may have run)
	queued /tmp/ub.q2 backing_dev /dev/vda
	pids+=("$queued_pid")
	sleep 0.5
	queued /tmp/ub.q3 disksize 1M
	pids+=("$queued_pid")
	sleep 0.5
	queued /tmp/ub.q4 writeback huge
	pids+=("$queued_pid")
	sleep 0.5
	queued /tmp/ub.q5 writeback page_index=16000
	pids+=("$queued_pid")
	sleep 0.5
	{ dd if=$bs bs=1M 2>&1 >/tmp/ub.bs | sed 's/.*: //' | head -n 1; wc -l </tmp/ub.bs; } >/tmp/ub.q6 &
	pids+=($!)
	wait "${pids[@]}"
	for a in wb0 q1 q2 q3 q4 q5 q6; do echo -n "$(cat /tmp/ub.$a | paste -sd' ') / "; done >/tmp/ub.answers
	line "stale size: writeback, reset, backing_dev, disksize 1M, writeback, page_index past the end, block_state lines" "$(cat /tmp/ub.answers)"
	line "stale size: disksize after" "$(cat $z/disksize)"
	echo 1 >$z/reset
}

# 4. "zram: refuse to use zero sized block device as backing device".
zero_sized() {
	losetup /dev/loop3 /tmp/ub.empty.img
	line "zero-sized backing device: an empty loop device" "$(write_attr $z/backing_dev /dev/loop3) $(cat $z/backing_dev)"
	line "zero-sized backing device: the uninitialised device itself" "$(write_attr $z/backing_dev /dev/zram0) $(cat $z/backing_dev)"
	losetup -d /dev/loop3
}

# 5. "zram: do not leak blk idx at the end of writeback": the last slot a writeback selects (a
# compressible page after 500 random ones: the last by index on 6.12, the smallest on 7.3) is
# overwritten while the writeback runs; afterwards, with everything discarded, no backing block
# stays in use.
last_slot() {
	local wb running
	echo /dev/vdd >$z/backing_dev
	echo 64M >$z/disksize
	dd if=/tmp/ub.random of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	dd if=/tmp/ub.text of=/dev/zram0 bs="$PAGE" count=1 seek=500 oflag=direct 2>/dev/null
	echo all >$z/idle
	write_attr $z/writeback idle >/tmp/ub.wb &
	wb=$!
	sleep 1
	if kill -0 $wb 2>/dev/null; then running=yes; else running=no; fi
	dd if=/tmp/ub.text of=/dev/zram0 bs="$PAGE" count=1 seek=500 oflag=direct 2>/dev/null
	wait $wb
	line "last slot overwritten during writeback: the writeback, running at the overwrite" "$(cat /tmp/ub.wb) $running"
	blkdiscard /dev/zram0
	line "last slot overwritten during writeback: bd_stat after discarding everything" "$(cat $z/bd_stat)"
	echo 1 >$z/reset
}

# 6. "zram: do not slot_free() written-back slots": huge pages written back (compressed where
# the kernel has it), their marks, then discarded: huge_pages back to 0, not below.
written_back_free() {
	[ ! -e $z/compressed_writeback ] || echo 1 >$z/compressed_writeback
	echo /dev/vda >$z/backing_dev
	echo 64M >$z/disksize
	dd if=/tmp/ub.random of=/dev/zram0 bs="$PAGE" count=100 oflag=direct 2>/dev/null
	line "written-back huge pages: writeback huge" "$(write_attr $z/writeback huge) $(mm 8) $(cat $z/bd_stat)"
	line "written-back huge pages: block_state marks" "$(block_state_summary)"
	line "written-back huge pages: data" "$(reads_as /dev/zram0 100 /tmp/ub.random100)"
	blkdiscard /dev/zram0
	line "written-back huge pages: discarded: orig compr huge_pages, bd_stat" "$(mm 1) $(mm 2) $(mm 8) $(cat $z/bd_stat)"
	echo 1 >$z/reset
	[ ! -e $z/compressed_writeback ] || echo 0 >$z/compressed_writeback
}

# 7. "zram: clear trailing bytes of compressed writeback pages" (7.3's compressed_writeback):
# a compressible page written back compressed after a random one through the same request page
# leaves zeroes, not the random page's bytes, after its object.
trailing() {
	local a
	if [ ! -e $z/compressed_writeback ]; then
		for a in "writeback page_indexes=0-1" "non-zero bytes in the last half of each used block" "data"; do
			line "compressed writeback trailing bytes: $a" "no compressed_writeback in this kernel"
		done
		return
	fi
	echo 1 >$z/writeback_batch_size
	echo 1 >$z/compressed_writeback
	dd if=/dev/urandom of=/dev/vda bs="$PAGE" count=4 oflag=direct 2>/dev/null
	echo /dev/vda >$z/backing_dev
	echo 1M >$z/disksize
	dd if=/tmp/ub.random of=/dev/zram0 bs="$PAGE" count=1 oflag=direct 2>/dev/null
	dd if=/tmp/ub.text of=/dev/zram0 bs="$PAGE" count=1 seek=1 oflag=direct 2>/dev/null
	line "compressed writeback trailing bytes: writeback page_indexes=0-1" "$(write_attr $z/writeback page_indexes=0-1) $(cat $z/bd_stat)"
	line "compressed writeback trailing bytes: non-zero bytes in the last half of each used block" \
		"$(for b in 0 1; do dd if=/dev/vda bs=$((PAGE / 2)) skip=$((2 * b + 1)) count=1 iflag=direct 2>/dev/null | tr -d '\0' | wc -c; done | paste -sd' ')"
	line "compressed writeback trailing bytes: data" \
		"$(cmp -s <(dd if=/dev/zram0 bs="$PAGE" skip=1 count=1 iflag=direct 2>/dev/null) <(head -c "$PAGE" /tmp/ub.text) && echo same || echo DIFFERENT)"
	echo 1 >$z/reset
	echo 0 >$z/compressed_writeback
	echo 32 >$z/writeback_batch_size
}

# 8. "zram: fix uninitialized ZRAM not releasing backing device": reset and hot_remove of a
# device that was never initialised close its backing device.
uninit_release() {
	echo /dev/vdd >$z/backing_dev
	line "uninitialised release: reset" "$(write_attr $z/reset 1) $(cat $z/backing_dev)"
	line "uninitialised release: another device takes the disk" "$(cat /sys/class/zram-control/hot_add) $(write_attr /sys/block/zram1/backing_dev /dev/vdd)"
	line "uninitialised release: hot_remove of it" "$(write_attr /sys/class/zram-control/hot_remove 1)"
	line "uninitialised release: the disk is free again" "$(write_attr $z/backing_dev /dev/vdd)"
	echo 1 >$z/reset
}

# 9. "zram: fix use-after-free in zram_bvec_write_partial()": 4 KiB written into a written-back
# page (a part of it where pages are larger than 4 KiB, else the whole page); the rest of the
# page keeps its data.
partial_over_written_back() {
	echo /dev/vda >$z/backing_dev
	echo 1M >$z/disksize
	dd if=/tmp/ub.random of=/dev/zram0 bs="$PAGE" count=4 oflag=direct 2>/dev/null
	echo all >$z/idle
	line "partial write over a written-back page: writeback idle" "$(write_attr $z/writeback idle) $(cat $z/bd_stat)"
	dd if=/tmp/ub.text of=/dev/zram0 bs=4096 count=1 seek=$((PAGE / 4096 * 2)) oflag=direct 2>/dev/null
	head -c $((4 * PAGE)) /tmp/ub.random >/tmp/ub.expected
	dd if=/tmp/ub.text of=/tmp/ub.expected bs=4096 count=1 seek=$((PAGE / 4096 * 2)) conv=notrunc 2>/dev/null
	line "partial write over a written-back page: data" "$(reads_as /dev/zram0 4 /tmp/ub.expected) $(cat $z/bd_stat)"
	echo 1 >$z/reset
}

# 10. "zram: set default primary compressor in zram_destroy_comps()": a disksize that fails in
# its compressor's set-up leaves the default algorithm, and the next disksize gives a device an
# ext4 file system then works on (before the fix: a NULL dereference on its first write).
failed_init() {
	echo deflate >$z/comp_algorithm
	write_attr $z/algorithm_params "algo=deflate level=100" >/dev/null
	line "failed initialisation: disksize" "$(write_attr $z/disksize 64M)"
	line "failed initialisation: comp_algorithm after it" "$(cat $z/comp_algorithm)"
	line "failed initialisation: disksize again" "$(write_attr $z/disksize 64M)"
	mkfs.ext4 -q /dev/zram0 2>&1
	mkdir -p /mnt/ub
	mount -o discard /dev/zram0 /mnt/ub
	cp /tmp/ub.random /mnt/ub/random
	rm /mnt/ub/random
	cp /tmp/ub.text /mnt/ub/text
	umount /mnt/ub
	line "failed initialisation: ext4 on the next device, e2fsck" "$(e2fsck -fn /dev/zram0 >/dev/null 2>&1; echo $?)"
	echo 1 >$z/reset
}

# 11. block_state's reads: whole lines only, a buffer too small for one line reads nothing (C,
# still), and any buffer size reads the same text in the end.
short_reads() {
	echo 1M >$z/disksize
	dd if=/tmp/ub.text of=/dev/zram0 bs="$PAGE" count=3 oflag=direct 2>/dev/null
	line "block_state: a 40-byte read" "$(dd if=$bs bs=40 count=1 2>/dev/null | wc -c)"
	line "block_state: a 41-byte read" "$(dd if=$bs bs=41 count=1 2>/dev/null | wc -c)"
	line "block_state: 100-byte reads give the lines of a 1 MiB read" \
		"$(cmp -s <(dd if=$bs bs=100 2>/dev/null | awk '{ print $1, $3 }') <(dd if=$bs bs=1M 2>/dev/null | awk '{ print $1, $3 }') && echo same || echo DIFFERENT) $(dd if=$bs bs=100 2>/dev/null | wc -l)"
	echo 1 >$z/reset
}

scenario() {
	modprobe "$1" num_devices=1 || return
	same_index
	endio
	stale_size
	zero_sized
	last_slot
	written_back_free
	trailing
	uninit_release
	partial_over_written_back
	failed_init
	short_reads
}

against_c upstream $LINES
check_eq "zram_rs: nothing stored and no memory used after the slot-write race and discards" "0 0 0" \
	"$(sed -n 's/^slot write race: after discarding .* -> //p' /tmp/upstream.rs)"
check "zram_rs: the stale-size queue waited behind the writeback, in order, and page_index was refused" \
	grep -qE '^stale size: .* -> OK / OK waited / OK waited / OK waited / OK waited / (Invalid argument|Numerical result out of range) waited / ' /tmp/upstream.rs
check_eq "zram_rs: no backing block in use after the last slot's overwrite and the discard" "0" \
	"$(awk -F' -> ' '/^last slot overwritten during writeback: bd_stat/ { split($2, f, " "); print f[1] }' /tmp/upstream.rs)"
zram_unload
finish
