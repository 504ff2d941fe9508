#!/bin/bash
# Compression: every algorithm round-trips compressible and random data, compressible data
# takes fewer bytes than it holds, random data is stored as huge pages; comp_algorithm,
# algorithm_params, max_comp_streams, mem_limit, mem_used_max, compact and debug_stat behave
# as in C zram; parallel writers verify.
. "$(dirname "$0")/lib.sh"
# The algorithms are those C zram.ko of this kernel offers (c_algorithms: all seven on the
# project's kernels, four on Debian's), eleven cases each. On 7.3: no max_comp_streams (its
# mode and four cases give way to two), and four cases of 7.3's own algorithm_params and
# comp_algorithm rules.
c_algorithms
plan $((69 + 11 * $(echo $ALGORITHMS | wc -w) + UNLOAD_CASES + ABI_7_3 * (-1 - 4 + 6)))

zram_load
z=$(sysblock 0)
dev=/dev/zram0
mm() { field "$1" $z/mm_stat; }

check_eq "comp_algorithm lists every algorithm C zram offers, $DEFAULT_ALGORITHM selected" "$ALGORITHMS_SHOWN" "$(cat $z/comp_algorithm)"
modes="comp_algorithm:644 algorithm_params:200 max_comp_streams:644 mem_limit:200 mem_used_max:200 compact:200 debug_stat:444"
[ $ABI_7_3 = 0 ] || modes=${modes/max_comp_streams:644 /}
for spec in $modes; do
	check_eq "mode of ${spec%:*}" "${spec#*:}" "$(stat -c %a "$z/${spec%:*}")"
done

yes "zram_rs compressible text, line after line after line" | head -c $((4 << 20)) >/tmp/text
dd if=/dev/urandom of=/tmp/random bs=1M count=4 2>/dev/null
text_sum=$(sha256sum </tmp/text | cut -d' ' -f1)
random_sum=$(sha256sum </tmp/random | cut -d' ' -f1)

for algorithm in $ALGORITHMS; do
	echo 1 >$z/reset
	check_eq "$algorithm: select" OK "$(write_attr $z/comp_algorithm "$algorithm")"
	echo 64M >$z/disksize
	check "$algorithm: shown selected" grep -qF "[$algorithm]" $z/comp_algorithm
	dd if=/tmp/text of=$dev bs=1M oflag=direct 2>/dev/null
	orig=$(mm 1) compr=$(mm 2)
	check_eq "$algorithm: 4 MiB of text pages stored" $((4 << 20)) "$orig"
	check "$algorithm: text compresses ($compr bytes for $orig)" test "$compr" -lt $((orig / 4))
	check_eq "$algorithm: text is not huge" 0 "$(mm 8)"
	dd if=/tmp/random of=$dev bs=1M seek=8 oflag=direct 2>/dev/null
	check_eq "$algorithm: random pages are huge" $(((4 << 20) / PAGE)) "$(mm 8)"
	check_eq "$algorithm: huge pages count whole pages" $((compr + (4 << 20))) "$(mm 2)"
	check_eq "$algorithm: text reads back" "$text_sum" "$(dd if=$dev bs=1M count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	check_eq "$algorithm: random reads back" "$random_sum" "$(dd if=$dev bs=1M skip=8 count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	check "$algorithm: sub-page write into a compressed page" \
		sh -c "printf 'patched' | dd of=$dev bs=1 seek=100 conv=notrunc,fsync 2>/dev/null &&
			echo 3 >/proc/sys/vm/drop_caches &&
			[ \"\$(dd if=$dev bs=1 skip=100 count=7 2>/dev/null)\" = patched ]"
	check_eq "$algorithm: no failed I/O" "0 0" "$(field 1 $z/io_stat) $(field 2 $z/io_stat)"
done

# comp_algorithm errors
check_eq "comp_algorithm after init: EBUSY" "Device or resource busy" "$(write_attr $z/comp_algorithm lz4)"
echo 1 >$z/reset
check_eq "reset restores $DEFAULT_ALGORITHM" "$ALGORITHMS_SHOWN" "$(cat $z/comp_algorithm)"
kmsg_mark snappy
check_eq "unknown algorithm: EINVAL" "Invalid argument" "$(write_attr $z/comp_algorithm snappy)"
names_choices() {
	kmsg_since snappy | grep -qF "unknown compression algorithm 'snappy'; available: $ALGORITHMS"
}
check "unknown algorithm names the choices in the kernel log" names_choices
check_eq "128-byte name: E2BIG" "Argument list too long" "$(write_attr $z/comp_algorithm "$(head -c 128 /dev/zero | tr '\0' a)")"
check_eq "trailing newline accepted" OK "$(write_attr $z/comp_algorithm $'zstd\n')"
check_eq "upper case is unknown" "Invalid argument" "$(write_attr $z/comp_algorithm LZ4)"
check_eq "zstd still selected after bad writes" "$(algorithms_shown zstd)" "$(cat $z/comp_algorithm)"

# algorithm_params
check_eq "params: level" OK "$(write_attr $z/algorithm_params 'level=3')"
check_eq "params: algo matching the selected one" OK "$(write_attr $z/algorithm_params 'algo=zstd level=1')"
check_eq "params: algo not selected: EINVAL" "Invalid argument" "$(write_attr $z/algorithm_params 'algo=lz4 level=1')"
# (Only priority 0 exists without recompression: EINVAL.)
if [ "$MULTI_COMP" = 1 ]; then
	check_eq "params: priority 1 (no recompression algorithm yet): kept for it" OK "$(write_attr $z/algorithm_params 'priority=1 level=1')"
else
	check_eq "params: priority 1 without recompression: EINVAL" "Invalid argument" "$(write_attr $z/algorithm_params 'priority=1 level=1')"
fi
check_eq "params: priority 4: EINVAL" "Invalid argument" "$(write_attr $z/algorithm_params 'priority=4 level=1')"
check_eq "params: key without value: EINVAL" "Invalid argument" "$(write_attr $z/algorithm_params 'level')"
check_eq "params: bad level: EINVAL" "Invalid argument" "$(write_attr $z/algorithm_params 'level=abc')"
check_eq "params: level out of range: ERANGE" "Numerical result out of range" "$(write_attr $z/algorithm_params 'level=4294967296')"
check_eq "params: a dictionary file is read" OK "$(write_attr $z/algorithm_params 'dict=/tmp/text')"
check_eq "params: unknown keys ignored" OK "$(write_attr $z/algorithm_params 'colour=blue level=2')"
# The level reaches the library: deflate level 0 stores, so nothing compresses.
echo deflate >$z/comp_algorithm
echo "level=0" >$z/algorithm_params
echo 16M >$z/disksize
dd if=/tmp/text of=$dev bs=1M oflag=direct 2>/dev/null
check_eq "deflate level=0 makes every page huge" $(((4 << 20) / PAGE)) "$(mm 8)"
echo 1 >$z/reset
# A dictionary that cannot be read fails after the parameters are reset (as C's failed load):
# level 0 is gone. 6.12 and 7.2 answer EINVAL, 7.3 the read's errno.
echo deflate >$z/comp_algorithm
echo "level=0" >$z/algorithm_params
missing="Invalid argument"
[ "$ABI_7_3" = 0 ] || [ "$ABI_7_2" = 1 ] || missing="No such file or directory"
check_eq "params: a missing dictionary file" "$missing" "$(write_attr $z/algorithm_params 'dict=/nonexistent')"
echo 16M >$z/disksize
dd if=/tmp/text of=$dev bs=1M oflag=direct 2>/dev/null
check_eq "a failed dictionary load resets the level: text compresses again" 0 "$(mm 8)"
echo 1 >$z/reset
# A backend that cannot start takes its selection with it (C's zram_destroy_comps).
echo deflate >$z/comp_algorithm
echo "level=42" >$z/algorithm_params
check_eq "deflate level=42 cannot initialise: EINVAL" "Invalid argument" "$(write_attr $z/disksize 16M)"
check_eq "still uninitialised" 0 "$(cat $z/initstate)"
check_eq "the failed start selects $DEFAULT_ALGORITHM again" "$ALGORITHMS_SHOWN" "$(cat $z/comp_algorithm)"
echo deflate >$z/comp_algorithm
echo "level=9" >$z/algorithm_params
check_eq "deflate level=9 initialises" OK "$(write_attr $z/disksize 16M)"
echo 1 >$z/reset
echo deflate >$z/comp_algorithm
echo "level=42" >$z/algorithm_params
echo 16M >$z/disksize 2>/dev/null
echo deflate >$z/comp_algorithm
check_eq "the failed start forgets level 42 too" OK "$(write_attr $z/disksize 16M)"
echo 1 >$z/reset

if [ $ABI_7_3 = 0 ]; then
	# max_comp_streams: reads the online CPUs, writes are accepted and ignored.
	check_eq "max_comp_streams" "$(nproc)" "$(cat $z/max_comp_streams)"
	check_eq "max_comp_streams write accepted" OK "$(write_attr $z/max_comp_streams 8)"
	check_eq "max_comp_streams unchanged" "$(nproc)" "$(cat $z/max_comp_streams)"
	# debug_stat before init: writestall and miss_free.
	check_eq "debug_stat format" "version: 1|       0        0" "$(tr '\n' '|' <$z/debug_stat | sed 's/|$//')"
else
	check "7.3 has no max_comp_streams" test ! -e $z/max_comp_streams
	# 7.3's debug_stat: a bare 0 where writestall was, then miss_free.
	check_eq "debug_stat format (7.3)" "version: 1|0        0" "$(tr '\n' '|' <$z/debug_stat | sed 's/|$//')"
	# 7.x's comp_algorithm compares the write as it is (one newline allowed, not two); 7.3's
	# drops the parameters set for the algorithm before, 7.2's keeps them (and zlib refuses
	# level 42 when the device starts).
	check_eq "7.x: two trailing newlines: EINVAL" "Invalid argument" "$(write_attr $z/comp_algorithm $'lz4\n\n')"
	echo deflate >$z/comp_algorithm
	echo "level=42" >$z/algorithm_params
	echo deflate >$z/comp_algorithm
	if [ "$ABI_7_2" = 1 ]; then
		check_eq "7.2: comp_algorithm keeps the level set before" "Invalid argument" "$(write_attr $z/disksize 16M)"
		echo "level=1" >$z/algorithm_params
		echo 16M >$z/disksize
	else
		check_eq "7.3: comp_algorithm forgets the level set before" OK "$(write_attr $z/disksize 16M)"
	fi
	# Once initialised, algorithm_params is refused.
	check_eq "7.x: algorithm_params after init: EBUSY" "Device or resource busy" "$(write_attr $z/algorithm_params 'level=1')"
	echo 1 >$z/reset
	check_eq "7.3: deflate.winbits must be a number" "Invalid argument" "$(write_attr $z/algorithm_params 'deflate.winbits=x')"
fi

check_eq "compact before init: EINVAL" "Invalid argument" "$(write_attr $z/compact 1)"
check_eq "mem_used_max 0 before init" OK "$(write_attr $z/mem_used_max 0)"
check_eq "mem_used_max 1: EINVAL" "Invalid argument" "$(write_attr $z/mem_used_max 1)"
check_eq "mem_used_max garbage: EINVAL" "Invalid argument" "$(write_attr $z/mem_used_max x)"

# mem_limit: writes past it fail, what was stored stays intact.
check_eq "mem_limit garbage: EINVAL" "Invalid argument" "$(write_attr $z/mem_limit x)"
check_eq "mem_limit 4M" OK "$(write_attr $z/mem_limit 4M)"
check_eq "mm_stat shows the limit" 4194304 "$(mm 4)"
echo 64M >$z/disksize
check_eq "mem_limit survives init" 4194304 "$(mm 4)"
dd if=/tmp/text of=$dev bs=1M oflag=direct 2>/dev/null
dd if=/dev/urandom of=/tmp/big bs=1M count=8 2>/dev/null
! dd if=/tmp/big of=$dev bs=1M seek=8 oflag=direct 2>/dev/null
check "writing 8 MiB of random data past a 4 MiB limit fails" test $? = 0
check "failed_writes counted" test "$(field 2 $z/io_stat)" -gt 0
check "memory stays within the limit" test "$(mm 3)" -le $((4 << 20))
check_eq "data stored before the limit is intact" "$text_sum" "$(dd if=$dev bs=1M count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
check_eq "mem_limit 0 lifts the limit" OK "$(write_attr $z/mem_limit 0)"
check "writes succeed again" dd if=/tmp/big of=$dev bs=1M seek=8 oflag=direct 2>/dev/null
# The high-water mark stays when memory is freed: discard the random data, compact.
peak=$(mm 3)
blkdiscard -o $((8 << 20)) -l $((8 << 20)) $dev
check_eq "compact" OK "$(write_attr $z/compact 1)"
used=$(mm 3) max=$(mm 5)
check "discard and compact free memory (mem_used_total $peak -> $used)" test "$used" -lt "$peak"
check "mem_used_max is the high-water mark ($max >= $peak > $used)" test "$max" -ge "$peak" -a "$max" -gt "$used"
check_eq "mem_used_max reset to the current use" OK "$(write_attr $z/mem_used_max 0)"
check_eq "mem_used_max equals mem_used_total after reset" "$(mm 3)" "$(mm 5)"
check_eq "compact again" OK "$(write_attr $z/compact 1)"
check "pages_compacted is a number" test "$(mm 7)" -ge 0
# Compaction moves objects out of sparse zspages: 32 MiB of pages that compress to about 40 %
# (one size class), then three of every four pages discarded, leave zspages a quarter full;
# compact must free pages (pages_compacted up, mem_used_total down) and keep the rest intact.
echo 1 >$z/reset
echo 64M >$z/disksize
fio --name=fragment --filename=$dev --direct=1 --rw=write --bs=4k --size=32M \
	--buffer_compress_percentage=60 --refill_buffers --buffer_pattern=0x5a >/dev/null
fio --name=sparse --filename=$dev --direct=1 --rw=trim:$PAGE --bs=$((3 * PAGE)) --size=32M >/dev/null
sum_before=$(dd if=$dev bs=1M count=32 iflag=direct 2>/dev/null | sha256sum)
sparse_used=$(mm 3) compacted_before=$(mm 7)
check_eq "compact a fragmented pool" OK "$(write_attr $z/compact 1)"
check "compact moved objects and freed pages (pages_compacted $compacted_before -> $(mm 7))" \
	test "$(mm 7)" -gt "$compacted_before"
check "compact lowered mem_used_total ($sparse_used -> $(mm 3))" test "$(mm 3)" -lt "$sparse_used"
check_eq "the pages left read back the same after compact" "$sum_before" \
	"$(dd if=$dev bs=1M count=32 iflag=direct 2>/dev/null | sha256sum)"
echo 1 >$z/reset
check_eq "reset clears mem_limit" 0 "$(mm 4)"

# Parallel writers compress in parallel and verify.
for algorithm in lz4 zstd; do
	echo 1 >$z/reset
	echo $algorithm >$z/comp_algorithm
	echo 256M >$z/disksize
	fio --name=parallel --filename=$dev --direct=1 --rw=randwrite --bs=4k --size=32M \
		--numjobs=2 --offset_increment=64M --buffer_compress_percentage=60 \
		--refill_buffers --verify=crc32c --verify_fatal=1 --group_reporting \
		--output=/tmp/fio.out >/dev/null 2>&1
	rc=$?
	check "fio numjobs=2 random writes with verify ($algorithm)" test $rc = 0
	[ $rc = 0 ] || tail -20 /tmp/fio.out | sed 's/^/# /'
	check "$algorithm: fio data compressed" test "$(mm 2)" -lt "$(mm 1)"
done

# More writers than compression streams (one per CPU): borrowers wait for a stream and get one;
# zstd's reads (fio's verify pass) borrow decompression contexts, one per CPU too.
echo 1 >$z/reset
echo zstd >$z/comp_algorithm
echo 256M >$z/disksize
jobs=$(($(nproc) * 3))
fio --name=crowd --filename=$dev --direct=1 --rw=randwrite --bs=4k --size=8M \
	--numjobs=$jobs --offset_increment=16M --buffer_compress_percentage=60 \
	--refill_buffers --verify=crc32c --verify_fatal=1 --group_reporting \
	--output=/tmp/fio.out >/dev/null 2>&1
rc=$?
check "$jobs writers share $(nproc) zstd streams, data verified" test $rc = 0
[ $rc = 0 ] || tail -20 /tmp/fio.out | sed 's/^/# /'

rm -f /tmp/text /tmp/random /tmp/big /tmp/fio.out
zram_unload
finish
