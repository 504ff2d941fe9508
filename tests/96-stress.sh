#!/bin/bash
# Stress: fio with verification over zero, same-filled, compressible and random buffers,
# sequential and random, two jobs at once; random ranges discarded from random data (exactly
# those read zero, and leave the store), then verified writers beside a job discarding written
# data; writers and discards racing on the same pages, then content and accounting checked;
# then swap under real memory pressure: memfill (tools/memfill.c) keeps more than the guest's
# RAM in anonymous memory, page kinds mixed, and checks every page (on the debug kernel, three
# times a memory cgroup's limit).
. "$(dirname "$0")/lib.sh"
plan $((23 + UNLOAD_CASES))

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
# Discards that must take, on pages that all differ: 16 MiB of random data, then 24 ranges of 1
# to 64 pages at random places in it (some overlapping) discarded with blkdiscard; the region
# must then read as the data with exactly those ranges zeroed. (fio's own trim verification,
# trim_percentage, aborts fio 3.33 with an assertion and exit status 0.)
base=$((256 << 20)) region_pages=$(((16 << 20) / PAGE))
head -c $((16 << 20)) /dev/urandom >/tmp/discard.expected
dd if=/tmp/discard.expected of=$dev bs=1M seek=$((base >> 20)) oflag=direct 2>/dev/null
ranges= stored=$(field 1 $z/mm_stat)
declare -A gone=()
for _ in $(seq 24); do
	first=$((RANDOM % region_pages)) count=$((RANDOM % 64 + 1))
	[ $((first + count)) -le $region_pages ] || count=$((region_pages - first))
	blkdiscard -o $((base + first * PAGE)) -l $((count * PAGE)) $dev
	dd if=/dev/zero of=/tmp/discard.expected bs=$PAGE seek=$first count=$count conv=notrunc 2>/dev/null
	ranges="$ranges $first+$count"
	for ((p = first; p < first + count; p++)); do gone[$p]=1; done
done
ktap_print_msg "discarded (first page+pages):$ranges"
check "24 discarded ranges read zero, the pages around them as written" \
	cmp -s /tmp/discard.expected <(dd if=$dev bs=1M skip=$((base >> 20)) count=16 iflag=direct 2>/dev/null)
check_eq "orig_data_size dropped by the ${#gone[@]} pages discarded" $((stored - ${#gone[@]} * PAGE)) \
	"$(field 1 $z/mm_stat)"
rm -f /tmp/discard.expected
# Verified writers on two regions (written in full above, so their writes replace stored pages)
# while a third job discards the region between them, which is written first: randtrim covers
# every page of it, so all of it leaves the store.
dd if=/dev/urandom of=$dev bs=1M seek=64 count=64 oflag=direct 2>/dev/null
stored=$(field 1 $z/mm_stat)
fio --direct=1 --bs=4k --filename=$dev --verify_fatal=1 --group_reporting \
	--name=writer --rw=randwrite --size=64M --numjobs=2 --offset_increment=128M \
	--buffer_compress_percentage=40 --refill_buffers --verify=crc32c \
	--name=discarder --rw=randtrim --bs=$PAGE --offset=64M --size=64M --loops=4 \
	--output=/tmp/fio.out >/dev/null 2>&1
rc=$?
check "fio verified writers beside a job discarding written data" test $rc = 0
[ $rc = 0 ] || tail -20 /tmp/fio.out | sed 's/^/# /'
check_eq "no failed reads or writes" "0 0" "$(field 1 $z/io_stat) $(field 2 $z/io_stat)"
check_eq "discards freed the 64 MiB written between the writers (orig_data_size)" $((stored - (64 << 20))) "$(field 1 $z/mm_stat)"
check "the discarded region reads zero" cmp -s -n $((64 << 20)) <(dd if=$dev bs=1M skip=64 count=64 iflag=direct 2>/dev/null) /dev/zero

# Writers and discards racing on the same pages: a 16 MiB region filled with a text pattern (no
# zero byte in it), then for 20 s two writers rewrite its pages with the pattern while a job
# discards pieces of it (one page, or 64 KiB). Afterwards every page is either the pattern or
# zero (discarded last), both kinds are there, orig_data_size is exactly the pattern pages, and
# discarding everything brings every count back to 0.
echo 1 >$z/reset
echo 64M >$z/disksize
text="zram_rs race: a page written and discarded at the same time...."
hex=$(printf '%s\n' "$text" | od -An -tx1 | tr -d ' \n')
yes "$text" | head -c $((16 << 20)) >/tmp/pattern
dd if=/tmp/pattern of=$dev bs=1M oflag=direct 2>/dev/null
fio --direct=1 --filename=$dev --size=16M --time_based --runtime=20 --group_reporting \
	--name=writer --rw=randwrite --bs=$PAGE --numjobs=2 --buffer_pattern=0x"$hex" \
	--name=discarder --rw=randtrim --bssplit=$PAGE/90:64k/10 \
	--output=/tmp/fio.out >/dev/null 2>&1
rc=$?
check "fio writers and a discarding job on the same pages" test $rc = 0
[ $rc = 0 ] || tail -20 /tmp/fio.out | sed 's/^/# /'
grep -E 'WRITE:|TRIM:' /tmp/fio.out | sed 's/^ */# /'
dd if=$dev of=/tmp/region bs=1M count=16 iflag=direct 2>/dev/null
pattern_bytes=$(tr -d '\000' </tmp/region | wc -c)
ktap_print_msg "after the race: $((pattern_bytes / PAGE)) pattern pages, $((((16 << 20) - pattern_bytes) / PAGE)) discarded; mm_stat: $(cat $z/mm_stat)"
check "every page reads the pattern or zero" cmp -s <(tr -d '\000' </tmp/region) <(head -c "$pattern_bytes" /tmp/pattern)
check "both writes and discards landed last on some pages" test "$pattern_bytes" -gt 0 -a "$pattern_bytes" -lt $((16 << 20))
check_eq "orig_data_size is exactly the pattern pages" "$pattern_bytes" "$(field 1 $z/mm_stat)"
blkdiscard $dev
check_eq "discarding everything: orig_data_size, compr_data_size, same_pages, huge_pages 0" "0 0 0 0" \
	"$(awk '{ print $1, $2, $6, $8 }' $z/mm_stat)"
check_eq "no failed reads or writes in the race" "0 0" "$(field 1 $z/io_stat) $(field 2 $z/io_stat)"
rm -f /tmp/pattern /tmp/region

# Swap under memory pressure.
echo 1 >$z/reset
echo 2G >$z/disksize
mkswap $dev >/dev/null
swapon $dev
ram_mib=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)
if [ "$DEBUG_KERNEL" = 1 ]; then
	# Under KASAN, filling more than the whole RAM takes most of the run: memfill keeps three
	# times a memory cgroup's memory.high instead, so that the cgroup's reclaim swaps its
	# pages out and its faults swap them in, the same driver paths at a third of the volume.
	size=256 limit=$((256 / 3))M
	cg=$(memory_cgroup zram_rs_stress memory.high $limit)
	where="in a cgroup of memory.high $limit"
	fill() { bash -c "echo \$\$ >$cg/cgroup.procs && exec memfill $size 1"; }
else
	size=$((ram_mib + 128)) cg= where="(RAM $ram_mib MiB)"
	fill() { memfill $size 1; }
fi
# What zram holds is sampled while memfill runs: its pages leave swap when it exits. Past RAM,
# reclaim may fail to allocate a swap cluster's table and say so (the swap core's allocation,
# under C zram too: Documentation/zram_rs.rst); nothing else is expected.
echo "zram_rs-test: expect swap-table-failure begin" >/dev/kmsg
fill >/tmp/memfill.out 2>&1 &
filler=$!
max_same=0 max_huge=0
while kill -0 $filler 2>/dev/null; do
	read -r -a same <$z/same_stat
	read -r -a mm <$z/mm_stat
	[ "${same[1]}" -le $max_same ] || max_same=${same[1]}
	[ "${mm[7]}" -le $max_huge ] || max_huge=${mm[7]}
	sleep 1
done
wait $filler
rc=$?
echo "zram_rs-test: expect swap-table-failure end" >/dev/kmsg
sed 's/^/# /' /tmp/memfill.out
check "memfill: $size MiB $where of mixed pages, all verified" test $rc = 0
ktap_print_msg "mm_stat after memfill: $(cat $z/mm_stat); same_stat: $(cat $z/same_stat)"
check "swap held non-zero same pages while memfill ran (up to $max_same)" test $max_same -gt 0
check "swap held huge pages while memfill ran (up to $max_huge)" test $max_huge -gt 0
check "swapoff" swapoff $dev
check_eq "every slot freed but the header" $PAGE "$(field 1 $z/mm_stat)"
check_io_ok "$z" "memfill's swap"
[ -z "$cg" ] || rmdir "$cg"

rm -f /tmp/fio.out /tmp/memfill.out
zram_unload
finish
