#!/bin/bash
# Counters that must never be seen below zero. Five fio jobs store compressible, random, zero
# and same-filled pages into the same four pages of an otherwise empty 1 MiB device and discard
# them, while two readers loop over mm_stat, same_stat, debug_stat and io_stat: no size may
# exceed the disk size and no page count the number of pages (a counter taken below zero, even
# for an instant, reads as a 20-digit number). Then everything is discarded and the data
# counters must be exactly 0. Last, mem_used_max is reset to the pool's size (`echo 0`) while
# the device is reset and initialised again: right after an initialisation it must not exceed
# mem_used_total (nothing written yet), i.e. no reset may store the old pool's size into the new
# initialisation's counters; each writer must have written at least as often as there were
# rounds.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
plan $((10 + UNLOAD_CASES))

# shellcheck disable=SC2119 # (no module parameters)
zram_load
z=$(sysblock 0)
dev=/dev/zram0
size=$((1 << 20))
pages=$((size / PAGE))
hot=4
echo $size >"$z"/disksize
stop=/tmp/counters.stop
rm -f $stop /tmp/counters.reader*

# within VALUE MAX: VALUE is a decimal number of at most MAX. A counter below zero prints as a
# number near 2^64, longer than any in range (and beyond bash's arithmetic), hence the length.
within() {
	[ ${#1} -le 15 ] && [ "$1" -le "$2" ] 2>/dev/null
}
# Cumulative counters (huge_pages_since, pages_compacted, writestall, ...) only grow; a wrapped
# one is still far beyond this.
cumulative=$((1 << 40))

# reader OUT: reads the four files until $stop exists; writes "reads bad_mm bad_same bad_other"
# to OUT and the first bad lines of each file to OUT.log.
reader() {
	local out=$1 reads=0 bad_mm=0 bad_same=0 bad_other=0 a b c d e f g h i
	while [ ! -e $stop ]; do
		read -r a b c d e f g h i <"$z"/mm_stat
		if ! { within "$a" $size && within "$b" $size && within "$c" $size &&
			within "$d" 0 && within "$e" $size && within "$f" $pages &&
			within "$g" $cumulative && within "$h" $pages && within "$i" $cumulative; }; then
			bad_mm=$((bad_mm + 1))
			[ $bad_mm -gt 3 ] || echo "mm_stat: $a $b $c $d $e $f $g $h $i" >>"$out.log"
		fi
		read -r a b <"$z"/same_stat
		if ! { within "$a" $pages && within "$b" $pages; }; then
			bad_same=$((bad_same + 1))
			[ $bad_same -gt 3 ] || echo "same_stat: $a $b" >>"$out.log"
		fi
		{
			read -r _
			read -r a b
		} <"$z"/debug_stat
		read -r c d e f <"$z"/io_stat
		if ! { within "$a" $cumulative && within "$b" $cumulative && within "$c" 0 &&
			within "$d" 0 && within "$e" 0 && within "$f" $cumulative; }; then
			bad_other=$((bad_other + 1))
			[ $bad_other -gt 3 ] || echo "debug_stat: $a $b; io_stat: $c $d $e $f" >>"$out.log"
		fi
		reads=$((reads + 1))
	done
	echo "$reads $bad_mm $bad_same $bad_other" >"$out"
}

reader /tmp/counters.reader1 &
reader1=$!
reader /tmp/counters.reader2 &
reader2=$!
# The writers share pages 0-3: every write replaces what another job stored a moment before.
fio --filename=$dev --direct=1 --bs="$PAGE" --size=$((hot * PAGE)) --time_based --runtime=15 \
	--norandommap --randrepeat=0 --group_reporting \
	--name=compressible --rw=randwrite --buffer_compress_percentage=50 --refill_buffers \
	--name=random --rw=randwrite --refill_buffers \
	--name=zero --rw=randwrite --zero_buffers \
	--name=same --rw=randwrite --buffer_pattern=0x5a5a5a5a \
	--name=discard --rw=randtrim \
	--output=/tmp/fio.out >/dev/null 2>&1
rc=$?
touch $stop
wait $reader1 $reader2
check "fio: 4 writers and a discarding job on the same $hot pages for 15 s" test $rc = 0
[ $rc = 0 ] || tail -20 /tmp/fio.out | sed 's/^/# /'
grep -E 'WRITE:|TRIM:' /tmp/fio.out | sed 's/^ */# /'
read -r reads1 mm1 same1 other1 </tmp/counters.reader1
read -r reads2 mm2 same2 other2 </tmp/counters.reader2
reads=$((reads1 + reads2))
cat /tmp/counters.reader*.log 2>/dev/null | sed 's/^/# out of range: /'
check_eq "$reads reads of mm_stat: sizes within the disk, page counts within its $pages pages" \
	0 $((mm1 + mm2))
check_eq "$reads reads of same_stat: within $pages pages" 0 $((same1 + same2))
check_eq "$reads reads of debug_stat and io_stat: no wrapped counter, no failed I/O" \
	0 $((other1 + other2))
check "the readers ran beside the writers" test "$reads1" -gt 0 -a "$reads2" -gt 0

blkdiscard $dev
ktap_print_msg "after discarding everything: mm_stat $(cat "$z"/mm_stat); same_stat $(cat "$z"/same_stat)"
check_eq "all discarded: orig_data_size compr_data_size same_pages huge_pages" "0 0 0 0" \
	"$(awk '{ print $1, $2, $6, $8 }' "$z"/mm_stat)"
check_eq "all discarded: same_stat" "0 0" "$(awk '{ print $1, $2 }' "$z"/same_stat)"
check_eq "no failed reads or writes" "0 0" "$(awk '{ print $1, $2 }' "$z"/io_stat)"

# mem_used_max against reset and a new initialisation: two processes keep writing 0 to
# mem_used_max (which sets it to the pool's current size) while the main loop stores 16 random
# pages, resets, initialises again and reads mm_stat at once. A write that took the old pool
# and stores its size after the reset zeroed the counters leaves mem_used_max above
# mem_used_total (0: nothing written since).
echo 1 >"$z"/reset
echo $((8 << 20)) >"$z"/disksize
data=$(head -c $((16 * PAGE)) /dev/urandom | tr -d '\000')
stop_poke=/tmp/counters.stop-poke
rm -f $stop_poke
# poke OUT: writes 0 to mem_used_max until $stop_poke exists, then the number of writes that
# succeeded to OUT.
poke() {
	local writes=0
	while [ ! -e $stop_poke ]; do
		if echo 0 >"$z"/mem_used_max 2>/dev/null; then writes=$((writes + 1)); fi
	done
	echo $writes >"$1"
}
poke /tmp/counters.poke1 &
poker1=$!
poke /tmp/counters.poke2 &
poker2=$!
rounds=0 stale=0 first=
end=$((SECONDS + 10))
while [ $SECONDS -lt $end ]; do
	# Through the page cache: written to the device when the redirection closes it.
	printf '%s' "$data" >$dev
	echo 1 >"$z"/reset
	echo $((8 << 20)) >"$z"/disksize
	read -r _ _ total _ max _ <"$z"/mm_stat
	if ! within "$max" "$total"; then
		stale=$((stale + 1))
		[ -n "$first" ] || first="mem_used_total $total, mem_used_max $max"
	fi
	rounds=$((rounds + 1))
done
alive=0
kill -0 $poker1 $poker2 2>/dev/null && alive=1
touch $stop_poke
wait $poker1 $poker2
[ -z "$first" ] || ktap_print_msg "first stale value: $first"
read -r pokes1 </tmp/counters.poke1
read -r pokes2 </tmp/counters.poke2
# Each round is a reset and an initialisation: both writers were still running at the end, and
# each wrote at least as often as there were rounds.
check "both mem_used_max writers ran to the end, each with as many writes as rounds ($pokes1 and $pokes2 writes, $rounds rounds)" \
	test $alive = 1 -a "$pokes1" -ge $rounds -a "$pokes2" -ge $rounds
check_eq "$rounds resets and initialisations beside mem_used_max writers: no stale mem_used_max" \
	0 $stale

rm -f $stop $stop_poke /tmp/counters.reader* /tmp/counters.poke* /tmp/fio.out
zram_unload
finish
