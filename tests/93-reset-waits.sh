#!/bin/bash
# What waits for a writeback, against C zram.ko in the same boot (writeback to /dev/vdd, a disk
# QEMU throttles to 400 KiB of writes a second, so that a writeback of 400 huge pages runs for
# about four seconds; each step also shows that the reset did wait, over half a second):
#  - `reset` during a writeback returns once the writeback has let go of everything: written at
#    once after it, `backing_dev` (the same disk, opened exclusively again) and `disksize` (a new
#    pool of the same name) succeed, and the kernel log has no "already present" (a second pool
#    or debugfs directory of the same name);
#  - attribute writes that come while a `reset` waits for a writeback wait for the reset and act
#    on the reset device: `disksize`, `comp_algorithm`, `recomp_algorithm`, `backing_dev` (of
#    another disk: the reset's own is released when its task returns to user space, in C),
#    `mem_limit` succeed, `writeback`, `recompress`, `idle`, `compact` answer EINVAL, as C
#    (each step says whether the write waited: 6.12's `algorithm_params` takes no lock and
#    answers at once, 7.3's waits);
#  - readers of statistics do not wait for an `idle` walk: while `echo all > idle` walks a device
#    of 6 Mi pages (24 GiB on 4 KiB pages, 1 GiB of it written; 1 Mi pages and 256 MiB on the
#    debug kernels) three times, a loop reads
#    `mm_stat`; its longest read must take under half the longest walk (C's figures are printed
#    beside zram_rs's; a reader that waits for a walk takes as long as it). The walk visits every
#    slot, written or not, in both drivers: the device's size makes it long enough to tell such
#    a reader from the scheduler's noise under TCG (up to about 20 ms).
# The transcripts of the first two must match line for line.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# (The default algorithm is C zram's of this kernel: lzo-rle on the project's kernels, lz4 on
# Debian's.)
c_algorithms
ATTRS=("disksize 64M" "comp_algorithm lz4" "recomp_algorithm algo=zstd priority=1"
	"algorithm_params algo=$DEFAULT_ALGORITHM" "backing_dev /dev/vda" "mem_limit 32M" "writeback huge"
	"recompress type=huge" "idle all" "compact 1")
# The debug kernels (several times slower) take five of them, whose subjects differ most: a
# write that initialises, one that C 6.12 runs under no lock, one that opens a disk, and two
# that need an initialised device.
[ "$DEBUG_KERNEL" = 0 ] || ATTRS=("disksize 64M" "algorithm_params algo=$DEFAULT_ALGORITHM"
	"backing_dev /dev/vda" "writeback huge" "idle all")
LINES=$((6 + 4 * ${#ATTRS[@]}))
plan $((LINES + 2 + 1 + 3 + UNLOAD_CASES))

z=/sys/block/zram0
huge_pages=400
size=$((huge_pages * PAGE + 32 * 1024 * 1024))
head -c $((huge_pages * PAGE)) /dev/urandom >/tmp/rw.huge
yes "a compressible page of text" | head -c $((32 * 1024 * 1024)) >/tmp/rw.text

line() { echo "$1 -> $2"; }

# setup [text]: the slow disk as the backing device, the random pages (each stored huge) and,
# with "text", 32 MiB of text (a pool that takes a moment to free).
setup() {
	echo /dev/vdd >$z/backing_dev
	echo $size >$z/disksize
	dd if=/tmp/rw.huge of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	[ "${1:-}" != text ] ||
		dd if=/tmp/rw.text of=/dev/zram0 bs=1M seek=$((huge_pages * PAGE)) oflag=direct,seek_bytes 2>/dev/null
}

# answer VAR FILE VALUE: one write(2) from this shell (no new process, so nothing comes between
# it and the caller's previous write); VAR is set to OK or FAILED.
answer() {
	printf -v "$1" FAILED
	if { printf '%s' "$3" >"$2"; } 2>/dev/null; then printf -v "$1" OK; fi
}

# waited START END: "waited" when END - START ($EPOCHREALTIME values) is over half a second.
waited() {
	local us=$((${2/./} - ${1/./}))
	if [ $us -gt 500000 ]; then echo waited; else echo "did not wait"; fi
}

scenario() {
	local m=$1 name value wb reset backing disksize t0 t1 answer
	modprobe "$m" num_devices=1 || return
	setup text
	kmsg_mark "pool-$m"
	write_attr $z/writeback huge >/tmp/rw.wb &
	wb=$!
	sleep 1
	# reset, then backing_dev and disksize from this shell at once.
	t0=$EPOCHREALTIME
	answer reset $z/reset 1
	t1=$EPOCHREALTIME
	answer backing $z/backing_dev /dev/vdd
	answer disksize $z/disksize $size
	line "reset during a writeback, then backing_dev and disksize at once" "$reset $backing $disksize"
	line "the reset waited for the writeback" "$(waited "$t0" "$t1")"
	wait $wb
	line "the writeback" "$(cat /tmp/rw.wb)"
	line "no second pool or debugfs directory of the same name" \
		"$(kmsg_since "pool-$m" | grep -cE 'already (present|exists)')"
	dd if=/tmp/rw.huge of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	line "the new device" "$(cat $z/backing_dev) $(reads_as /dev/zram0 $huge_pages /tmp/rw.huge)"
	echo 1 >$z/reset
	for attr in "${ATTRS[@]}"; do
		name=${attr%% *} value=${attr#* }
		setup
		write_attr $z/writeback huge >/tmp/rw.wb &
		wb=$!
		sleep 0.5
		(
			t0=$EPOCHREALTIME
			echo "$(write_attr $z/reset 1) $(waited "$t0" "$EPOCHREALTIME")" >/tmp/rw.reset
		) &
		reset=$!
		sleep 0.5
		t0=$EPOCHREALTIME
		answer=$(write_attr $z/"$name" "$value")
		line "$name $value while reset waits for a writeback" "$answer, $(waited "$t0" "$EPOCHREALTIME")"
		wait $wb $reset
		line "$name: the reset, the writeback" "$(cat /tmp/rw.reset) $(cat /tmp/rw.wb)"
		line "$name: initstate, backing_dev" "$(cat $z/initstate) $(cat $z/backing_dev)"
		line "$name: comp_algorithm, mem_limit" "$(cat $z/comp_algorithm) $(field 4 $z/mm_stat)"
		echo 1 >$z/reset
		echo 0 >$z/mem_limit
		echo "$DEFAULT_ALGORITHM" >$z/comp_algorithm
	done
	line "end: initstate" "$(cat $z/initstate)"
}

against_c reset-waits $LINES
rmmod zram_rs

# stalls MODULE: three `idle all` walks of a device of 6 Mi pages with 1 GiB written while a
# loop reads mm_stat; prints "READS LONGEST_READ_US LONGEST_WALK_US".
stalls() {
	local reader walk longest=0 t0 t1 us
	modprobe "$1" num_devices=1 || return
	echo $(((DEBUG_KERNEL ? 1 : 6) * 1024 * 1024 * PAGE)) >$z/disksize
	dd if=/dev/zero of=/dev/zram0 bs=1M count=$((DEBUG_KERNEL ? 256 : 1024)) oflag=direct 2>/dev/null
	rm -f /tmp/rw.stop
	(
		while [ ! -e /tmp/rw.stop ]; do
			t0=$EPOCHREALTIME
			read -r _ <$z/mm_stat
			t1=$EPOCHREALTIME
			echo $((${t1/./} - ${t0/./}))
		done >/tmp/rw.reads
	) &
	reader=$!
	sleep 1
	for walk in 1 2 3; do
		t0=$EPOCHREALTIME
		echo all >$z/idle
		t1=$EPOCHREALTIME
		us=$((${t1/./} - ${t0/./}))
		[ "$us" -le "$longest" ] || longest=$us
	done
	touch /tmp/rw.stop
	wait $reader
	echo 1 >$z/reset
	echo "$(wc -l </tmp/rw.reads) $(sort -n /tmp/rw.reads | tail -n 1) $longest"
}
stalls zram >/tmp/rw.stalls.c
read -r c_reads c_read c_walk </tmp/rw.stalls.c
rmmod zram
stalls zram_rs >/tmp/rw.stalls.rs
read -r rs_reads rs_read rs_walk </tmp/rw.stalls.rs
ktap_print_msg "C zram: ${c_reads:-?} mm_stat reads, the longest ${c_read:-?} us; the longest idle walk ${c_walk:-?} us"
ktap_print_msg "zram_rs: ${rs_reads:-?} mm_stat reads, the longest ${rs_read:-?} us; the longest idle walk ${rs_walk:-?} us"
check "zram_rs: the idle walks took long enough to measure (over 50 ms)" [ "${rs_walk:-0}" -gt 50000 ]
check "zram_rs: mm_stat was read during the walks" [ "${rs_reads:-0}" -gt 10 ]
check "zram_rs: the longest mm_stat read took under half the longest walk" \
	[ $((${rs_read:-0} * 2)) -lt "${rs_walk:-0}" ]
zram_unload
finish
