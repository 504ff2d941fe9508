#!/bin/bash
# Recompression with C zram in the same boot as the oracle: one scenario runs against C
# zram.ko and then zram_rs.ko and prints one line per step (what a write answered, the
# attributes read back, the mm_stat fields that do not depend on the allocator, debugfs
# block_state without its time column, and whether the whole disk still reads back as
# written). The transcripts must match line for line: the same libraries at the same levels
# give the same compressed sizes, so mm_stat and the r (recompressed) and n (incompressible)
# marks are C's exactly. Steps: recomp_algorithm's and recompress's errors in each state,
# algorithm_params addressing a recompression algorithm by priority and by name, then lzo as
# the primary algorithm with zstd, deflate and lz4hc behind it (6.12 tries them in order, 7.3
# one priority per write), `recompress type=huge`, `idle all` and `type=idle` with
# `max_pages=`, `threshold=`, `algo=`, `priority=`, a recompression of everything, the
# incompressible pages taken by `writeback incompressible`, overwrites of recompressed pages,
# reset, and recompression and writeback with the pool above mem_limit. Then, on zram_rs:
# recompression racing writes to the same pages, `reset` and `hot_remove`, every page verified.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# A kernel whose C zram has no recompression (no CONFIG_ZRAM_MULTI_COMP, as Debian's): zram_rs
# built for it has none either (95-oracle compares the attributes, absent in both), so there
# is nothing to compare: one skipped case.
c_algorithms
if [ "$MULTI_COMP" = 0 ]; then
	plan 1
	ktap_test_skip "recompression: C zram of this kernel has none (CONFIG_ZRAM_MULTI_COMP)"
	finish
	exit 0
fi
LINES=78
plan $((LINES + 2 + 1 + 1 + 1 + 7 + 1 + UNLOAD_CASES))

pages=128
pattern=/tmp/rc.pattern
expected=/tmp/rc.expected
# Page i: random (stored huge) when i % 4 == 0, text when 1, zeroes when 2, half text and
# half random when 3 (a large object that only some algorithms shrink by a size class).
: >$pattern
for i in $(seq 0 $((pages - 1))); do
	case $((i % 4)) in
	0) head -c "$PAGE" /dev/urandom ;;
	1) yes "zram recompression page $i of $pages, some text to compress" | head -c "$PAGE" ;;
	2) head -c "$PAGE" /dev/zero ;;
	3)
		yes "page $i" | head -c $((PAGE / 2))
		head -c $((PAGE / 2)) /dev/urandom
		;;
	esac >>$pattern
done
head -c $((4 * PAGE)) /dev/urandom >/tmp/rc.new

# scenario MODULE: the steps, one line each.
scenario() {
	local m=$1 z=/sys/block/zram0 dev=/dev/zram0 mm
	modprobe "$m" num_devices=1 || return
	line() { echo "$1 -> $2"; }
	# orig_data_size compr_data_size same_pages huge_pages huge_pages_since
	mmf() {
		read -r -a mm <$z/mm_stat
		echo "${mm[0]} ${mm[1]} ${mm[5]} ${mm[7]} ${mm[8]}"
	}
	recomp() { write_attr $z/recompress "$1"; }
	# recomp_algorithm's text, lines joined by |. C zram 7.3 returns NUL bytes after it (its
	# show function adds each priority's offset twice to the length); they are dropped here and
	# counted once the transcripts are compared.
	algorithms() { tr -d '\000' <$z/recomp_algorithm | tr '\n' '|'; }
	cp $pattern $expected
	line "modes" "$(stat -c %a $z/recomp_algorithm $z/recompress | tr '\n' ' ')"
	line "uninit recomp_algorithm" "$(algorithms)"
	line "uninit recompress" "$(recomp type=idle)"
	line "uninit recompress threshold=100000" "$(recomp threshold=100000)"
	for bad in "algo=nope" "priority=2" "algo=zstd priority=0" "algo=zstd priority=4" \
		"algo=zstd priority=x" "algo=zstd priority=99999999999" "algo" ""; do
		line "recomp_algorithm '$bad'" "$(write_attr $z/recomp_algorithm "$bad")"
	done
	line "recomp_algorithm algo=zstd" "$(write_attr $z/recomp_algorithm $'algo=zstd\n')"
	line "recomp_algorithm algo=deflate priority=2" "$(write_attr $z/recomp_algorithm 'algo=deflate priority=2')"
	line "recomp_algorithm algo=lz4hc priority=3" "$(write_attr $z/recomp_algorithm 'priority=3 algo=lz4hc')"
	line "read recomp_algorithm" "$(algorithms)"
	line "comp_algorithm lzo" "$(write_attr $z/comp_algorithm lzo)"
	line "algorithm_params priority=1 level=5" "$(write_attr $z/algorithm_params 'priority=1 level=5')"
	line "algorithm_params algo=lz4hc level=12" "$(write_attr $z/algorithm_params 'algo=lz4hc level=12')"
	line "algorithm_params algo=nope level=1" "$(write_attr $z/algorithm_params 'algo=nope level=1')"
	line "algorithm_params priority=4 level=1" "$(write_attr $z/algorithm_params 'priority=4 level=1')"
	line "algorithm_params priority=3 algo=zstd" "$(write_attr $z/algorithm_params 'priority=3 algo=zstd level=1')"
	line "disksize" "$(write_attr $z/disksize $((pages * PAGE)))"
	line "init recomp_algorithm" "$(write_attr $z/recomp_algorithm algo=lz4)"
	line "init read recomp_algorithm" "$(algorithms)"
	dd if=$pattern of=$dev bs="$PAGE" oflag=direct 2>/dev/null
	line "written: mm" "$(mmf)"
	line "written: block_state" "$(block_state_summary)"
	line "recompress threshold=4096" "$(recomp threshold=4096)"
	line "recompress threshold=x" "$(recomp threshold=x)"
	line "recompress max_pages=-1" "$(recomp max_pages=-1)"
	line "recompress type" "$(recomp type)"
	line "recompress algo=nope" "$(recomp algo=nope)"
	line "recompress algo=lzo" "$(recomp algo=lzo)"
	line "recompress priority=5" "$(recomp priority=5)"
	line "recompress type=huge priority=1" "$(recomp 'type=huge priority=1')"
	line "huge: mm" "$(mmf)"
	line "huge: block_state" "$(block_state_summary)"
	line "huge: data" "$(reads_as $dev $pages $expected)"
	line "idle all" "$(write_attr $z/idle all)"
	line "recompress type=idle max_pages=10" "$(recomp 'type=idle max_pages=10')"
	line "idle max_pages: mm" "$(mmf)"
	line "idle max_pages: block_state" "$(block_state_summary)"
	line "recompress type=huge_idle threshold=2000 priority=2" "$(recomp 'type=huge_idle threshold=2000 priority=2')"
	line "threshold: mm" "$(mmf)"
	# The last priority with a threshold: 7.3 marks the pages it leaves incompressible.
	line "recompress type=idle threshold=1500 priority=3" "$(recomp 'type=idle threshold=1500 priority=3')"
	line "threshold, last priority: block_state" "$(block_state_summary)"
	line "recompress type=idle algo=lz4hc" "$(recomp 'type=idle algo=lz4hc')"
	line "lz4hc: mm" "$(mmf)"
	line "lz4hc: block_state" "$(block_state_summary)"
	line "lz4hc: data" "$(reads_as $dev $pages $expected)"
	# Everything left, each priority in turn (on 6.12 one write tries them all in order).
	line "recompress priority=1" "$(recomp priority=1)"
	line "recompress priority=2" "$(recomp 'priority=2 max_pages=1000')"
	line "recompress priority=3" "$(recomp ' priority=3 ')"
	line "all: mm" "$(mmf)"
	line "all: block_state" "$(block_state_summary)"
	line "all: data" "$(reads_as $dev $pages $expected)"
	line "recompress type=foo" "$(recomp type=foo)"
	line "type=foo: mm" "$(mmf)"
	# Overwrite recompressed pages 4-7: their new objects are the primary algorithm's again.
	dd if=/tmp/rc.new of=$dev bs="$PAGE" seek=4 count=4 oflag=direct conv=notrunc 2>/dev/null
	dd if=/tmp/rc.new of=$expected bs="$PAGE" seek=4 count=4 conv=notrunc 2>/dev/null
	line "overwritten: block_state" "$(block_state_summary)"
	line "overwritten: data" "$(reads_as $dev $pages $expected)"
	line "reset" "$(write_attr $z/reset 1)"
	line "reset: recomp_algorithm" "$(algorithms)"
	line "reset: recompress" "$(recomp type=idle)"
	# with_backing_dev: the reset device set up again with the VM's disk as its backing device
	# and zstd behind the primary algorithm, holding the pattern.
	with_backing_dev() {
		echo /dev/vda >$z/backing_dev
		echo algo=zstd >$z/recomp_algorithm
		echo $((pages * PAGE)) >$z/disksize
		dd if=$pattern of=$dev bs="$PAGE" oflag=direct 2>/dev/null
	}
	# The incompressible pages (marked after all algorithms failed) go to the backing device.
	with_backing_dev
	cp $pattern $expected
	line "incompressible: recompress type=huge" "$(recomp type=huge)"
	line "writeback incompressible" "$(write_attr $z/writeback incompressible)"
	line "incompressible: bd_stat" "$(cat $z/bd_stat)"
	line "incompressible: block_state" "$(block_state_summary)"
	line "incompressible: data" "$(reads_as $dev $pages $expected)"
	# Recompression and writeback with the pool above mem_limit (a page): they move stored
	# pages and allocate no more than they free, and the limit stops only new writes.
	echo 1 >$z/reset
	with_backing_dev
	line "limited: mem_limit one page" "$(write_attr $z/mem_limit "$PAGE")"
	line "limited: idle all" "$(write_attr $z/idle all)"
	line "limited: recompress type=idle" "$(recomp type=idle)"
	line "limited: recompressed mm" "$(mmf)"
	line "limited: writeback huge" "$(write_attr $z/writeback huge)"
	line "limited: bd_stat" "$(cat $z/bd_stat)"
	line "limited: block_state" "$(block_state_summary)"
	line "limited: data" "$(reads_as $dev $pages $pattern)"
	# A new write is refused (the page keeps what it held).
	line "limited: a new write" "$(dd if=/tmp/rc.new of=$dev bs="$PAGE" count=1 oflag=direct 2>/dev/null && echo OK || echo failed)"
	line "limited: data after it" "$(reads_as $dev $pages $pattern)"
	echo 1 >$z/reset
}

against_c rc $LINES
# The scenario worked on C (a step failing the same way on both drivers would test nothing):
# the device initialised, recompressions answered OK and shrank compr_data_size, pages read back.
c_worked() {
	grep -qx 'disksize -> OK' /tmp/rc.c &&
		grep -qx 'recompress type=huge priority=1 -> OK' /tmp/rc.c &&
		grep -qx 'recompress type=idle algo=lz4hc -> OK' /tmp/rc.c &&
		grep -qx 'limited: recompress type=idle -> OK' /tmp/rc.c &&
		grep -qx 'limited: writeback huge -> OK' /tmp/rc.c &&
		grep -q '^limited: bd_stat -> *[1-9]' /tmp/rc.c &&
		grep -qx 'limited: a new write -> failed' /tmp/rc.c &&
		[ "$(grep -c '^[a-z0-9 ,]*: data -> same$' /tmp/rc.c)" -ge 3 ] &&
		awk '/^written: mm -> / { w = $5 } /^all: mm -> / { a = $5 } END { exit !(a > 0 && a < w) }' /tmp/rc.c
}
check "C zram's transcript: initialised, recompressed (OK, smaller), read back" c_worked

# recomp_algorithm's read is its text and nothing after it, with three priorities configured
# (C zram 7.3's has NUL bytes after the text: a deliberate difference, see the documentation).
# nuls MODULE: the NUL bytes in the read.
nuls() {
	modprobe "$1" num_devices=1
	for spec in algo=zstd 'algo=deflate priority=2' 'algo=lz4hc priority=3'; do
		echo "$spec" >/sys/block/zram0/recomp_algorithm
	done
	tr -cd '\000' </sys/block/zram0/recomp_algorithm | wc -c
	rmmod "$1"
}
rmmod zram_rs
c_nuls=$(nuls zram)
ktap_print_msg "NUL bytes after recomp_algorithm's text with three priorities: C zram $c_nuls"
check_eq "zram_rs's recomp_algorithm has no NUL byte" 0 "$(nuls zram_rs)"
zram_load

# Races, on zram_rs: while recompressions run over the whole disk, one half is rewritten and
# the other read back again and again, and every slot marked idle again; every read and, at
# the end, every page must be as last written.
z=/sys/block/zram0
echo algo=zstd >$z/recomp_algorithm
echo 'algo=deflate priority=2' >$z/recomp_algorithm
race_pages=2048
half=$((race_pages / 2))
yes "recompressed while rewritten" | head -c $((race_pages * PAGE)) >/tmp/rc.race
echo $((race_pages * PAGE)) >$z/disksize
dd if=/tmp/rc.race of=/dev/zram0 bs="$PAGE" oflag=direct 2>/dev/null
dd if=/tmp/rc.race of=/tmp/rc.race-second bs="$PAGE" skip=$half 2>/dev/null
: >/tmp/rc.race-answers
(
	for round in 1 2 3 4; do
		echo all >$z/idle
		write_attr $z/recompress type=idle >>/tmp/rc.race-answers
		write_attr $z/recompress priority=2 >>/tmp/rc.race-answers
	done
) &
recompressing=$!
round=0 reads=0 bad_reads=0 bad_idle=0
while kill -0 $recompressing 2>/dev/null || [ $round = 0 ]; do
	round=$((round + 1))
	yes "round $round rewrites the first half" | head -c $((half * PAGE)) >/tmp/rc.race-new
	dd if=/tmp/rc.race-new of=/dev/zram0 bs="$PAGE" oflag=direct conv=notrunc 2>/dev/null
	dd if=/tmp/rc.race-new of=/tmp/rc.race bs="$PAGE" conv=notrunc 2>/dev/null
	cmp -s <(dd if=/dev/zram0 bs="$PAGE" skip=$half iflag=direct 2>/dev/null) /tmp/rc.race-second ||
		bad_reads=$((bad_reads + 1))
	reads=$((reads + 1))
	# An idle write meets the slots being recompressed (it waits for each, as in C).
	[ "$(write_attr $z/idle all)" = OK ] || bad_idle=$((bad_idle + 1))
done
wait $recompressing
ktap_print_msg "$round rewrites and $reads reads of the other half during the recompressions; block_state: $(awk '{ print $3 }' /sys/kernel/debug/zram/zram0/block_state 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ,)"
check_eq "the 8 recompressions racing rewrites and reads answered OK" "8 OK" \
	"$(wc -l </tmp/rc.race-answers) $(sort -u /tmp/rc.race-answers | tr '\n' ' ' | sed 's/ $//')"
check_eq "every read during the recompressions ($reads) was as written" 0 $bad_reads
check_eq "every idle write during the recompressions ($round) answered OK" 0 $bad_idle
check "every page reads back as last written" \
	cmp -s <(dd if=/dev/zram0 bs="$PAGE" iflag=direct 2>/dev/null) /tmp/rc.race
echo 1 >$z/reset
cat /sys/class/zram-control/hot_add >/dev/null
# Hexadecimal text: lzo-rle finds nothing to repeat (stored huge), zstd's entropy coding halves
# it, so each page the recompression of huge pages reaches is stored again and
# compr_data_size moves. (An empty write would write nothing: no recompression at all.)
head -c $((race_pages * PAGE / 2)) /dev/urandom | od -An -tx1 | tr -d ' \n' >/tmp/rc.reset-race
for id in 0 1; do
	echo algo=zstd >/sys/block/zram$id/recomp_algorithm
	echo $((race_pages * PAGE)) >/sys/block/zram$id/disksize
	dd if=/tmp/rc.reset-race of=/dev/zram$id bs="$PAGE" oflag=direct 2>/dev/null
done
write_attr /sys/block/zram0/recompress type=huge >/tmp/rc.race0 &
r0=$!
write_attr /sys/block/zram1/recompress type=huge >/tmp/rc.race1 &
r1=$!
# The reset comes once zram0's recompression has stored a page (compr_data_size moved) and
# before it has answered: the race happened.
read -r -a mm0 </sys/block/zram0/mm_stat
initial=${mm0[1]}
deadline=$((SECONDS + 20))
while [ $SECONDS -lt $deadline ]; do
	read -r -a mm0 </sys/block/zram0/mm_stat
	[ "${mm0[1]}" = "$initial" ] || break
done
if [ "${mm0[1]}" != "$initial" ] && kill -0 $r0 2>/dev/null; then
	under_way=yes
else
	under_way="no (compr_data_size $initial -> ${mm0[1]}, $(cat /tmp/rc.race0 2>/dev/null))"
fi
reset=$(write_attr /sys/block/zram0/reset 1)
removed=$(write_attr /sys/class/zram-control/hot_remove 1)
wait $r0 $r1
check_eq "reset and hot_remove during a recompression" "OK OK" "$reset $removed"
check_eq "the reset came while zram0's recompression was under way" yes "$under_way"
answered() { grep -qxE 'OK|Invalid argument' /tmp/rc.race0 && grep -qxE 'OK|Invalid argument' /tmp/rc.race1; }
check "the recompressions answered OK or EINVAL" answered
check_eq "after the race: zram0 uninitialised, zram1 gone" "0 absent" \
	"$(cat /sys/block/zram0/initstate) $([ -e /sys/block/zram1 ] && echo present || echo absent)"
rm -f /tmp/rc.*
zram_unload
finish
