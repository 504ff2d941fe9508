#!/bin/bash
# The block-device side of the ABI, against C zram.ko in the same boot (transcripts compared line
# for line): the request queue's limits and flags before and after initialisation (block sizes,
# io_min/io_opt, discard and write-zeroes limits, rotational, stable_writes, and the rest of
# queue/), partitions refused (a partition table is not scanned), what `disksize` and `reset`
# announce (the kernel's "detected capacity change" line; no uevent, since the block layer sends
# none for a change from or to an empty disk: the kernel's uevent sequence number, read around
# each, shows that), `blkdiscard -z` (write zeroes), discards that are not page-aligned (at
# byte 2048: refused by util-linux's blkdiscard itself; of the last 4 KiB of a 16 KiB page:
# kept) or past the end (clipped to nothing by blkdiscard), the debugfs directory of a device
# removed with it and made again by hot_add, and the backing device: replaced while set (the first released), and released by
# `reset` and by hot_remove of a device never initialised.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
LINES=28
plan $((LINES + 2 + 1 + 1 + UNLOAD_CASES))

z=/sys/block/zram0
q=$z/queue
line() { echo "$1 -> $2"; }
# Every queue attribute that reads, "name=value" on one line (the scheduler and the
# driver-independent statistics left out).
queue() {
	local f
	for f in "$q"/*; do
		case ${f##*/} in scheduler | iostats* | nr_requests | io_poll* | wbt_lat_usec) continue ;; esac
		[ -f "$f" ] && [ -r "$f" ] || continue
		printf '%s=%s ' "${f##*/}" "$(cat "$f" 2>/dev/null | tr ' ' _)"
	done
}
# A DOS partition table with one Linux partition (sectors 2048-10239) in sector 0.
printf '\x83' >/tmp/ba.type
{
	head -c 446 /dev/zero
	printf '\x00\x20\x21\x00'
	cat /tmp/ba.type
	printf '\x41\x7f\x00\x00\x08\x00\x00\x00\x20\x00\x00'
	head -c 48 /dev/zero
	printf '\x55\xaa'
} >/tmp/ba.mbr
head -c $((4 * PAGE)) /dev/urandom >/tmp/ba.data

scenario() {
	local m=$1 seq
	modprobe "$m" num_devices=1 || return
	line "queue before init" "$(queue)"
	read -r seq </sys/kernel/uevent_seqnum
	kmsg_mark "capacity-$m"
	echo 64M >$z/disksize
	line "uevents sent by disksize" "$(($(cat /sys/kernel/uevent_seqnum) - seq))"
	line "disksize announced" "$(kmsg_since "capacity-$m" | grep -o 'zram0: detected capacity change.*')"
	line "queue after init" "$(queue)"
	line "size in sectors" "$(cat $z/size)"
	# Partitions: the table is written, a rescan is refused and no partition appears.
	dd if=/tmp/ba.mbr of=/dev/zram0 bs=512 count=1 conv=notrunc oflag=direct 2>/dev/null
	line "rescan of a partition table" "$(blockdev --rereadpt /dev/zram0 2>&1 | sed 's/.*: //')"
	line "partitions" "$(ls -d $z/zram0p* 2>/dev/null | wc -l) $(blkid -p -o value -s PTTYPE /dev/zram0)"
	# Write zeroes and discards.
	dd if=/tmp/ba.data of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	line "blkdiscard -z of page 1" "$(blkdiscard -z -o "$PAGE" -l "$PAGE" /dev/zram0 2>&1 | sed 's/.*: //') $(field 1 $z/mm_stat) $(field 6 $z/mm_stat)"
	line "page 1 reads zeroes" "$(cmp -s <(dd if=/dev/zram0 bs="$PAGE" skip=1 count=1 iflag=direct 2>/dev/null) <(head -c "$PAGE" /dev/zero) && echo yes || echo no)"
	line "pages 0, 2, 3 kept" "$(for p in 0 2 3; do cmp -s <(dd if=/dev/zram0 bs="$PAGE" skip=$p count=1 iflag=direct 2>/dev/null) <(dd if=/tmp/ba.data bs="$PAGE" skip=$p count=1 2>/dev/null) && echo -n "$p "; done)"
	line "discard at byte 2048" "$(blkdiscard -o 2048 -l 4096 /dev/zram0 2>&1 | sed 's/.*: //')"
	line "discard of the last 4 KiB of page 2" "$(blkdiscard -o $((2 * PAGE + 4096 * (PAGE / 4096 - 1))) -l 4096 /dev/zram0 2>&1 | sed 's/.*: //') $(field 1 $z/mm_stat)"
	line "page 2 after it" "$(cmp -s <(dd if=/dev/zram0 bs="$PAGE" skip=2 count=1 iflag=direct 2>/dev/null) <(dd if=/tmp/ba.data bs="$PAGE" skip=2 count=1 2>/dev/null) && echo intact || echo changed)"
	line "discard of page 3" "$(blkdiscard -o $((3 * PAGE)) -l "$PAGE" /dev/zram0 2>&1 | sed 's/.*: //') $(field 1 $z/mm_stat)"
	line "discard past the end" "$(blkdiscard -o $((64 << 20)) -l "$PAGE" /dev/zram0 2>&1 | sed 's/.*: //')"
	read -r seq </sys/kernel/uevent_seqnum
	kmsg_mark "capacity-$m"
	echo 1 >$z/reset
	line "uevents sent by reset" "$(($(cat /sys/kernel/uevent_seqnum) - seq))"
	line "reset announced" "$(kmsg_since "capacity-$m" | grep -o 'zram0: detected capacity change.*')"
	# debugfs: a device's directory goes with it and comes back with hot_add.
	line "hot_add" "$(cat /sys/class/zram-control/hot_add)"
	line "debugfs zram1 after hot_add" "$([ -d /sys/kernel/debug/zram/zram1 ] && echo present || echo absent)"
	line "hot_remove 1" "$(write_attr /sys/class/zram-control/hot_remove 1)"
	line "debugfs zram1 after hot_remove" "$([ -d /sys/kernel/debug/zram/zram1 ] && echo present || echo absent)"
	line "hot_add again" "$(cat /sys/class/zram-control/hot_add) $([ -d /sys/kernel/debug/zram/zram1 ] && echo present || echo absent)"
	# The backing device: replaced while set, the first one released.
	line "backing_dev vda" "$(write_attr $z/backing_dev /dev/vda)"
	line "backing_dev vdd replaces it" "$(write_attr $z/backing_dev /dev/vdd) $(cat $z/backing_dev)"
	line "zram1 takes vda" "$(write_attr /sys/block/zram1/backing_dev /dev/vda)"
	line "zram1 hot_remove with vda, never initialised" "$(write_attr /sys/class/zram-control/hot_remove 1)"
	line "zram0 takes vda after it" "$(write_attr $z/backing_dev /dev/vda)"
	echo 1 >$z/reset
	line "reset released vda: another device takes it" "$(cat /sys/class/zram-control/hot_add) $(write_attr /sys/block/zram1/backing_dev /dev/vda)"
	echo 1 >/sys/class/zram-control/hot_remove
}

# 7.x prints "detected capacity change" rate-limited (ten in five seconds, for every disk): the
# scripts before this one in the same boot may have used the window up.
[ "$KSERIES" = 6.12 ] || sleep 5
against_c block-abi $LINES
check_eq "zram_rs: disksize and reset announced the capacity change" \
	"disksize announced -> zram0: detected capacity change from 0 to 131072|reset announced -> zram0: detected capacity change from 131072 to 0" \
	"$(grep 'announced' /tmp/block-abi.rs | paste -sd'|')"
zram_unload
finish
