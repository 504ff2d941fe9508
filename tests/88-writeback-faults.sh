#!/bin/bash
# Backing devices that fail, with C zram in the same boot as the oracle. The VM has two disks
# behind QEMU's blkdebug driver: /dev/vdb fails every write, /dev/vdc fails reads of its
# blocks 1 to 64. One scenario runs against C zram.ko and then zram_rs.ko and prints one line
# per step; the transcripts must match line for line, and zram_rs must never lose a page it
# could read: a failed writeback leaves every page in memory, and a page whose block fails to
# read fails alone, until it is rewritten.
# Steps: `writeback huge` to vdb (EIO, nothing written back, the budget not spent); then to
# vdc (written back), each page read whole, the answers and counters (io_stat, bd_stat); the
# failing pages rewritten and read again; reset. On 7.3, pages written back compressed to
# vdc, each read whole. Then, zram_rs only, pieces of pages whose block fails to read.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# Transcript lines of the scenario (each one a case), plus the checks below.
PAGES=16
LINES=$((14 + PAGES + 3 * ABI_7_3))
plan $((LINES + 6 + UNLOAD_CASES))

pattern=/tmp/wbf.pattern
# Even pages random (stored huge, written back by `writeback huge`), odd pages text.
: >$pattern
for i in $(seq 0 $((PAGES - 1))); do
	if [ $((i % 2)) = 0 ]; then
		head -c "$PAGE" /dev/urandom
	else
		yes "zram writeback fault page $i" | head -c "$PAGE"
	fi >>$pattern
done
head -c "$PAGE" /dev/urandom >/tmp/wbf.new

# scenario MODULE: the steps, one line each.
scenario() {
	local m=$1 z=/sys/block/zram0 dev=/dev/zram0 expected=/tmp/wbf.expected-$1 i
	modprobe "$m" || return
	line() { echo "$1 -> $2"; }
	# orig_data_size compr_data_size huge_pages
	mmf() {
		read -r -a mm <$z/mm_stat
		echo "${mm[0]} ${mm[1]} ${mm[7]}"
	}
	# read_page I: reads page I whole with direct I/O; prints "ok" or the error.
	read_page() {
		local err
		err=$(dd if=$dev of=/dev/null bs="$PAGE" skip="$1" count=1 iflag=direct 2>&1 >/dev/null) &&
			echo ok || echo "$err" | grep -o 'Input/output error' | head -n 1
	}
	intact() {
		cmp -s <(dd if=$dev bs="$PAGE" count=$PAGES iflag=direct 2>/dev/null) "$expected" &&
			echo intact || echo DIFFERENT
	}
	cp $pattern "$expected"
	# Writes fail.
	echo /dev/vdb >$z/backing_dev
	echo $((PAGES * PAGE)) >$z/disksize
	dd if=$pattern of=$dev bs="$PAGE" oflag=direct 2>/dev/null
	echo 1 >$z/writeback_limit_enable
	echo $((100 * PAGE / 4096)) >$z/writeback_limit
	line "failing writes: writeback huge" "$(write_attr $z/writeback huge)"
	line "failing writes: bd_stat" "$(cat $z/bd_stat)"
	line "failing writes: mm" "$(mmf)"
	line "failing writes: budget left" "$(cat $z/writeback_limit)"
	line "failing writes: data" "$(intact)"
	line "failing writes: writeback idle after idle all" "$(write_attr $z/idle all) $(write_attr $z/writeback idle)"
	line "failing writes: io_stat" "$(cat $z/io_stat)"
	echo 1 >$z/reset
	# Reads fail.
	echo 0 >$z/writeback_limit_enable
	echo /dev/vdc >$z/backing_dev
	echo $((PAGES * PAGE)) >$z/disksize
	dd if=$pattern of=$dev bs="$PAGE" oflag=direct 2>/dev/null
	line "failing reads: writeback huge" "$(write_attr $z/writeback huge)"
	line "failing reads: bd_stat" "$(cat $z/bd_stat)"
	for i in $(seq 0 $((PAGES - 1))); do
		line "failing reads: page $i" "$(read_page "$i")"
	done
	line "failing reads: io_stat" "$(cat $z/io_stat)"
	line "failing reads: bd_stat" "$(cat $z/bd_stat)"
	# The written-back pages rewritten: their blocks go back, and they read again.
	for i in $(seq 0 2 $((PAGES - 1))); do
		dd if=/tmp/wbf.new of=$dev bs="$PAGE" seek="$i" count=1 oflag=direct conv=notrunc 2>/dev/null
		dd if=/tmp/wbf.new of="$expected" bs="$PAGE" seek="$i" count=1 conv=notrunc 2>/dev/null
	done
	line "rewritten: bd_stat" "$(cat $z/bd_stat)"
	line "rewritten: data" "$(intact)"
	line "rewritten: mm" "$(mmf)"
	[ "$m" != zram_rs ] || pieces >/tmp/wbf.pieces
	echo 1 >$z/reset
	[ "$ABI_7_3" = 0 ] || compressed_reads
}

# compressed_reads (7.3): every page written back compressed to vdc, then read whole (read
# asynchronously, then decompressed in a worker): each page's answer, and the counters.
compressed_reads() {
	local z=/sys/block/zram0 answers=() i
	echo 1 >$z/compressed_writeback
	echo /dev/vdc >$z/backing_dev
	echo $((PAGES * PAGE)) >$z/disksize
	dd if=$pattern of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	line "compressed: idle all, writeback idle" "$(write_attr $z/idle all) $(write_attr $z/writeback idle) $(cat $z/bd_stat)"
	for i in $(seq 0 $((PAGES - 1))); do
		answers+=("$(read_page "$i" | sed "s|Input/output error|EIO|")")
	done
	line "compressed: pages read" "${answers[*]}"
	line "compressed: io_stat, bd_stat" "$(cat $z/io_stat) $(cat $z/bd_stat)"
	echo 1 >$z/reset
	echo 0 >$z/compressed_writeback
}

# zram_rs only (C zram has no pieces on 4 KiB pages, where it takes every segment as a whole
# page): the even pages written back again, then page 2 read and page 4 written in 4 KiB
# blocks from buffers 512 bytes into a memory page, so that each block arrives in two pieces
# straddling memory pages: pieces of written-back pages are read through a worker, and
# written by read-modify-write. Both fail with EIO, counted in io_stat.
pieces() {
	local z=/sys/block/zram0
	piece_io() {
		fio --name=pieces --filename=/dev/zram0 --direct=1 --bs=4k --iomem_align=512 --size=4k \
			--offset=$(($2 * PAGE)) --rw="$1" --output=/dev/null >/dev/null 2>&1 && echo done || echo failed
	}
	echo huge >$z/writeback
	read -r -a io <$z/io_stat
	echo "$(piece_io read 2) $(piece_io write 4) $(($(field 1 $z/io_stat) - io[0])) $(($(field 2 $z/io_stat) - io[1]))"
}

scenario zram >/tmp/wbf.c 2>&1
rmmod zram
scenario zram_rs >/tmp/wbf.rs 2>&1
compare_transcripts /tmp/wbf.c /tmp/wbf.rs $LINES
check "a failed writeback kept every page (zram_rs)" grep -qx 'failing writes: data -> intact' /tmp/wbf.rs
check "pages whose block fails read back EIO (zram_rs)" grep -q 'page [0-9]* -> Input/output error' /tmp/wbf.rs
check "the other pages still read (zram_rs)" grep -q 'page [0-9]* -> ok' /tmp/wbf.rs
check_eq "pieces of pages whose block fails: read and write fail, counted in io_stat" \
	"failed failed 1 1" "$(cat /tmp/wbf.pieces)"
zram_unload
finish
