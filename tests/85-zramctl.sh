#!/bin/bash
# util-linux zramctl end to end: --find with size and algorithm, the status listing (every
# column filled from zram_rs's attributes), and --reset; then every option of zramctl for what
# zram_rs offers (--find, --size, --algorithm, --streams, --reset, the listing's --output-all,
# --bytes, --raw, --noheadings), good and bad arguments, against C zram in this boot: the
# transcripts must match line for line.
. "$(dirname "$0")/lib.sh"
options_lines=23
plan $((18 + options_lines + 2 + 1 + UNLOAD_CASES))

# fill: 200 (kernel) pages on zram0: 100 random (the same on every call), 50 zero, 50 of text.
head -c $((100 * PAGE)) /dev/urandom >/tmp/zramctl.random
yes "zramctl listing" | head -c $((50 * PAGE)) >/tmp/zramctl.text
fill() {
	dd if=/tmp/zramctl.random of=/dev/zram0 bs=$PAGE oflag=direct 2>/dev/null
	dd if=/dev/zero of=/dev/zram0 bs=$PAGE count=50 seek=100 oflag=direct 2>/dev/null
	dd if=/tmp/zramctl.text of=/dev/zram0 bs=$PAGE seek=150 oflag=direct 2>/dev/null
}
# The default algorithm C zram of this kernel has (zram_rs has the same).
c_algorithms
# What C zram stores for the same pages: the sizes zramctl must show for zram_rs.
modprobe zram num_devices=0
zramctl --find --size 64M --algorithm lz4 >/dev/null
fill
read -r _ c_compr c_total _ </sys/block/zram0/mm_stat
zramctl --reset /dev/zram0
rmmod zram

zram_load num_devices=0
found=$(zramctl --find --size 64M --algorithm lz4 2>&1)
check_eq "zramctl --find --size 64M --algorithm lz4 takes a hot-added device" /dev/zram0 "$found"
check_eq "the device got the size" 67108864 "$(cat /sys/block/zram0/disksize)"
check "the device got the algorithm" grep -qF '[lz4]' /sys/block/zram0/comp_algorithm
fill
rm -f /tmp/zramctl.random /tmp/zramctl.text
mkdir -p /mnt/zramctl
columns=NAME,ALGORITHM,DISKSIZE,DATA,COMPR,TOTAL,ZERO-PAGES,MOUNTPOINT
line=$(zramctl --raw --bytes --noheadings --output $columns /dev/zram0)
ktap_print_msg "zramctl: $line"
read -r name algorithm disksize data compr total zero mountpoint <<<"$line"
# STREAMS is max_comp_streams, which 7.3 no longer has: an empty column there, as with C zram.
streams=$(zramctl --raw --noheadings --output STREAMS /dev/zram0)
mm() { field "$1" /sys/block/zram0/mm_stat; }
check_eq "NAME" /dev/zram0 "$name"
check_eq "ALGORITHM" lz4 "$algorithm"
check_eq "DISKSIZE" 67108864 "$disksize"
check_eq "DATA is orig_data_size (200 pages)" $((200 * PAGE)) "$data"
check_eq "COMPR is compr_data_size, C zram's for the same pages" "$(mm 2) $c_compr" "$compr $compr"
check_eq "TOTAL is mem_used_total, C zram's for the same pages" "$(mm 3) $c_total" "$total $total"
if [ $ABI_7_3 = 0 ]; then
	check_eq "STREAMS" "$(nproc)" "$streams"
else
	check_eq "STREAMS is empty on 7.3 (no max_comp_streams)" "" "$streams"
fi
check_eq "ZERO-PAGES is same_pages" 50 "$zero"
check_eq "no MOUNTPOINT" "" "${mountpoint:-}"
mkfs.ext4 -q /dev/zram0 && mount /dev/zram0 /mnt/zramctl
check_eq "MOUNTPOINT when mounted" /mnt/zramctl "$(zramctl --raw --noheadings --output MOUNTPOINT /dev/zram0)"
check "zramctl lists the device in its status table" sh -c "zramctl | grep -q '^/dev/zram0 '"
umount /mnt/zramctl
check "zramctl --reset" zramctl --reset /dev/zram0
check "the device is reset or removed" sh -c "[ ! -e /sys/block/zram0 ] || [ \"\$(cat /sys/block/zram0/initstate)\" = 0 ]"
second=$(zramctl --find --size 32M)
check_eq "zramctl --find again" /dev/zram0 "$second"
check_eq "default algorithm after reset" "$DEFAULT_ALGORITHM" "$(zramctl --raw --noheadings --output ALGORITHM /dev/zram0)"
zramctl --reset /dev/zram0
rmmod zram_rs

# run WHAT COMMAND...: one transcript line: the command's status and output (one line).
run() {
	local what=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	echo "$what: rc $rc, $(echo "$out" | tr -s ' ' | paste -sd'|')"
}
# The same data on every run: a program of the guest and zeros (C's and zram_rs's sizes match).
data=/usr/local/bin/bash
zramctl_scenario() {
	local dev
	modprobe "$1" num_devices=0
	run "find, size, algorithm" zramctl --find --size 64M --algorithm zstd
	echo "zram0: $(cat /sys/block/zram0/disksize) $(cat /sys/block/zram0/comp_algorithm)"
	dd if=$data of=/dev/zram0 bs=$PAGE oflag=direct conv=sync 2>/dev/null
	dd if=/dev/zero of=/dev/zram0 bs=$PAGE count=16 seek=$(($(stat -c %s $data) / PAGE + 1)) oflag=direct 2>/dev/null
	run "listing, every column" zramctl --output-all --bytes --raw /dev/zram0
	run "listing with headings" zramctl --output NAME,ALGORITHM,DISKSIZE,ZERO-PAGES --bytes /dev/zram0
	run "listing of every device" zramctl --noheadings --output NAME,DISKSIZE --bytes
	run "size of an initialised device" zramctl --size 32M /dev/zram0
	run "algorithm of an initialised device" zramctl --algorithm lz4 /dev/zram0
	run "find again" zramctl --find --size 8M
	run "find with an unknown algorithm" zramctl --find --size 8M --algorithm nosuch
	echo "devices: $(ls /sys/block | grep '^zram' | paste -sd' ')"
	run "find with a bad size" zramctl --find --size 12Q
	# (7.3 has no max_comp_streams: zramctl fails there, with either driver)
	run "find with streams" zramctl --find --size 8M --streams 2
	run "set up a device by name" zramctl --size 16M --algorithm lz4 /dev/zram2
	echo "zram2: $(cat /sys/block/zram2/disksize) $(cat /sys/block/zram2/comp_algorithm)"
	run "reset two devices" zramctl --reset /dev/zram1 /dev/zram2
	echo "devices: $(ls /sys/block | grep '^zram' | paste -sd' ')"
	run "reset a missing device" zramctl --reset /dev/zram9
	run "size without a device" zramctl --size 8M
	exec 3</dev/zram0
	run "reset of an open device" zramctl --reset /dev/zram0
	exec 3<&-
	run "reset" zramctl --reset /dev/zram0
	echo "devices: $(ls /sys/block | grep '^zram' | paste -sd' ')"
	run "listing with no device" zramctl
	for dev in /sys/block/zram*; do
		[ -e "$dev" ] && echo 1 >"$dev/reset"
	done
	rmmod "$1"
	echo "unloaded: rc $?"
}
zramctl_scenario zram >/tmp/zramctl.c 2>&1
zramctl_scenario zram_rs >/tmp/zramctl.rs 2>&1
compare_transcripts /tmp/zramctl.c /tmp/zramctl.rs $options_lines
check "zram_rs took zramctl's algorithm and size" grep -qx 'zram0: 67108864 .*\[zstd\].*' /tmp/zramctl.rs

zram_load
zram_unload
finish
