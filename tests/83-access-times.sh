#!/bin/bash
# Access times, against C zram.ko in the same boot (transcripts compared line for line): 64
# pages written, three seconds later the first half read, then `idle 2` marks exactly the
# half not accessed for two seconds, block_state shows those marks, and `writeback idle`
# writes back exactly that half. block_state's time column is checked against the uptime:
# each page shows the time of its last access (the written half about three seconds before
# the read half), within a second (zram_rs keeps whole seconds, as C 7.3; C 6.12 has
# microseconds). Then an `idle` age beyond the uptime, on both drivers.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
LINES=10
plan $((LINES + 2 + 1 + 1 + 2 + UNLOAD_CASES))

z=/sys/block/zram0
bs=/sys/kernel/debug/zram/zram0/block_state
pages=64
yes "a page whose access time is kept" | head -c $((pages * PAGE)) >/tmp/at.data
line() { echo "$1 -> $2"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
# times LOW HIGH FIRST LAST: how many of pages FIRST..LAST show a time within LOW-1 .. HIGH+1.
times() {
	awk -v low="$1" -v high="$2" -v first="$3" -v last="$4" \
		'$1 >= first && $1 <= last && $2 >= low - 1 && $2 <= high + 1 { n++ } END { print n + 0 }' $bs
}

scenario() {
	local m=$1 written_at written_end read_at read_end
	modprobe "$m" num_devices=1 || return
	echo /dev/vda >$z/backing_dev
	echo $((pages * PAGE)) >$z/disksize
	written_at=$(uptime_s)
	dd if=/tmp/at.data of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	written_end=$(uptime_s)
	sleep 3
	read_at=$(uptime_s)
	dd if=/dev/zram0 of=/dev/null bs="$PAGE" count=$((pages / 2)) iflag=direct 2>/dev/null
	read_end=$(uptime_s)
	line "block_state lines" "$(wc -l <$bs)"
	line "pages written at the time of the write" "$(times "$written_at" "$written_end" $((pages / 2)) $((pages - 1)))"
	line "pages read at the time of the read" "$(times "$read_at" "$read_end" 0 $((pages / 2 - 1)))"
	line "idle 2" "$(write_attr $z/idle 2)"
	line "idle pages" "$(awk '$3 ~ /i/ { print $1 }' $bs | paste -sd, | md5sum | cut -c1-8) $(awk '$3 ~ /i/' $bs | wc -l)"
	line "block_state" "$(block_state_summary)"
	line "writeback idle" "$(write_attr $z/writeback idle)"
	line "bd_stat" "$(cat $z/bd_stat)"
	line "written-back pages" "$(awk '$3 ~ /w/ { print $1 }' $bs | paste -sd, | md5sum | cut -c1-8) $(awk '$3 ~ /w/' $bs | wc -l)"
	line "data" "$(reads_as /dev/zram0 $pages /tmp/at.data)"
	echo 1 >$z/reset
}

against_c access-times $LINES
check_eq "zram_rs: the 32 pages not read for 3 s were idle and written back" "32 32" \
	"$(awk '/^idle pages -> / { a = $NF } /^written-back pages -> / { b = $NF } END { print a, b }' /tmp/access-times.rs)"

# An age beyond the uptime (2^32 - 1 s), before and after initialisation: C 6.12 refuses it on
# an uninitialised device and marks nothing; C 7.3 takes it without looking at the device and
# marks nothing. C 7.2 refuses it on an uninitialised device, and its cutoff wraps: it marks
# every page idle; zram_rs answers as C 7.2 but marks nothing, on purpose
# (Documentation/zram_rs.rst, "C zram 7.2").
beyond() {
	local age=4294967295
	modprobe "$1" num_devices=1 || return
	echo "uninitialised: $(write_attr $z/idle $age)"
	echo $((pages * PAGE)) >$z/disksize
	dd if=/tmp/at.data of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
	echo "initialised: $(write_attr $z/idle $age), $(awk '$3 ~ /i/' $bs | wc -l) idle"
	echo 1 >$z/reset
}
rmmod zram_rs
beyond zram >/tmp/at-beyond.c 2>&1
rmmod zram
beyond zram_rs >/tmp/at-beyond.rs 2>&1
if [ "$ABI_7_3" = 0 ] || [ "$ABI_7_2" = 1 ]; then
	expected="uninitialised: Invalid argument|initialised: OK, 0 idle"
else
	expected="uninitialised: OK|initialised: OK, 0 idle"
fi
check_eq "zram_rs: an age beyond the uptime marks nothing" "$expected" "$(paste -sd'|' /tmp/at-beyond.rs)"
if [ "$ABI_7_2" = 1 ]; then
	expected="uninitialised: Invalid argument|initialised: OK, $pages idle"
	check_eq "C 7.2: an age beyond the uptime marks every page (zram_rs: none)" "$expected" \
		"$(paste -sd'|' /tmp/at-beyond.c)"
else
	check_eq "as C: an age beyond the uptime" "$(paste -sd'|' /tmp/at-beyond.c)" "$(paste -sd'|' /tmp/at-beyond.rs)"
fi
zram_unload
finish
