#!/bin/bash
# The data path: write-then-read of several patterns at page and sub-page offsets, unwritten
# sectors, discard, unaligned direct I/O buffers, and I/O past the end of the disk (refused by
# the block layer, which checks every bio against the capacity before the driver sees it).
. "$(dirname "$0")/lib.sh"
plan $((24 + UNLOAD_CASES))

zram_load
z=$(sysblock 0)
echo 32M >$z/disksize
dev=/dev/zram0

check "unwritten disk reads as zeroes" cmp -s -n $((32 << 20)) $dev /dev/zero

# Patterns: random, zeroes, 0xff, text, a counting sequence.
dd if=/dev/urandom of=/tmp/random bs=1M count=4 2>/dev/null
dd if=/dev/zero bs=1M count=4 2>/dev/null >/tmp/zero
tr '\0' '\377' </tmp/zero >/tmp/ones
yes "zram_rs test line with some text" | head -c $((4 << 20)) >/tmp/text
awk 'BEGIN { for (i = 0; i < 600000; i++) printf "%07d\n", i }' | head -c $((4 << 20)) >/tmp/count
offset_mb=0
for pattern in random zero ones text count; do
	dd if=/tmp/$pattern of=$dev bs=1M seek=$offset_mb oflag=direct 2>/dev/null
	want=$(sha256sum </tmp/$pattern | cut -d' ' -f1)
	got=$(dd if=$dev bs=1M skip=$offset_mb count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
	check_eq "4 MiB of $pattern at ${offset_mb} MiB reads back (direct)" "$want" "$got"
	offset_mb=$((offset_mb + 4))
done
echo 3 >/proc/sys/vm/drop_caches
got=$(dd if=$dev bs=1M count=4 2>/dev/null | sha256sum | cut -d' ' -f1)
check_eq "random data reads back through the page cache" "$(sha256sum </tmp/random | cut -d' ' -f1)" "$got"

# Sub-page writes through the page cache: 512-byte blocks at odd sector offsets.
dd if=/dev/urandom of=/tmp/small bs=512 count=7 2>/dev/null
for sector in 1 7 9 4095; do
	dd if=/tmp/small of=$dev bs=512 seek=$sector conv=notrunc,fsync 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	check "7 sectors at sector $sector read back" cmp -s /tmp/small <(dd if=$dev bs=512 skip=$sector count=7 2>/dev/null)
done
# Neighbours of a sub-page write keep their data: sector 0 of the random pattern.
check "sector 0 untouched by the sub-page writes" cmp -s <(head -c 512 /tmp/random) <(dd if=$dev bs=512 count=1 2>/dev/null)

# Direct I/O from buffers that start 512 bytes into a page: every 4 KiB block arrives in two
# pieces that straddle memory pages.
fio --name=unaligned --filename=$dev --direct=1 --rw=write --bs=4k --size=2M --offset=24M \
	--iomem_align=512 --verify=crc32c --do_verify=1 --verify_fatal=1 --output=/tmp/fio.out >/dev/null 2>&1
rc=$?
check "direct I/O with 512-byte aligned buffers (fio verify)" test $rc = 0
[ $rc = 0 ] || sed 's/^/# /' /tmp/fio.out | tail -20

# One direct write whose bio holds whole pages between partial pieces (tools/vecwrite.c: four
# buffers, two of them 512 bytes into a memory page): the stream the bio holds for its whole
# pages is given back for each partial page's read and taken again after it.
check "a write of partial pieces between whole pages reads back (vecwrite)" \
	vecwrite $dev $(((26 << 20) / PAGE))

# Discard frees whole (kernel) pages: they read back as zeroes and leave the store.
dd if=/tmp/random of=$dev bs=1M seek=28 oflag=direct 2>/dev/null
before=$(field 1 $z/mm_stat)
blkdiscard -o $((28 << 20)) -l $((4 << 20)) $dev
check "discarded range reads zero" cmp -s -n $((4 << 20)) <(dd if=$dev bs=1M skip=28 count=4 iflag=direct 2>/dev/null) /dev/zero
check_eq "discard removed 4 MiB from orig_data_size" $((before - (4 << 20))) "$(field 1 $z/mm_stat)"
check "data before the discarded range intact" cmp -s /tmp/count <(dd if=$dev bs=1M skip=16 count=4 iflag=direct 2>/dev/null)
check_eq "notify_free counts the discarded pages" $(((4 << 20) / PAGE)) "$(field 4 $z/io_stat)"

# Past the end: the block layer refuses the I/O (zram_rs never sees it), and nothing stored
# changes: the whole disk is compared with a copy taken before.
dd if=$dev of=/tmp/before bs=1M iflag=direct 2>/dev/null
! dd if=/tmp/random of=$dev bs=4k seek=$(((32 << 20) / 4096)) count=1 oflag=direct 2>/dev/null
check "block layer refuses a write past the end" test $? = 0
check_eq "read past the end returns nothing" 0 "$(dd if=$dev bs=4k skip=$(((32 << 20) / 4096)) count=1 iflag=direct 2>/dev/null | wc -c)"
echo 3 >/proc/sys/vm/drop_caches
check "content unchanged after the refused write (32 MiB against a copy taken before)" \
	cmp -s -n $((32 << 20)) /tmp/before $dev
check_eq "no failed reads" 0 "$(field 1 $z/io_stat)"

# On a lockdep kernel (the debug run), the slot locks and the stream places taken above are
# known to lockdep as classes of their own, so their order against every other lock is checked
# (the VM fails the run on any report).
for class in "zram_rs slot" "zram_rs stream"; do
	if [ -e /proc/lockdep ]; then
		check "lockdep knows the lock class \"$class\"" grep -q "$class" /proc/lockdep
	else
		ktap_test_skip "lockdep knows the lock class \"$class\" (no lockdep in this kernel)"
	fi
done

rm -f /tmp/random /tmp/zero /tmp/ones /tmp/text /tmp/count /tmp/small /tmp/before
zram_unload
finish
