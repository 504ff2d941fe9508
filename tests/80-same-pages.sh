#!/bin/bash
# Same-element pages: pages made of one repeated 64-bit word are stored as that word (no
# allocation, no compression), counted in same_pages and same_stat, read back exactly (whole
# pages, sub-page pieces at odd offsets, through the page cache), overwritten both ways with
# exact stats; same_detection=0 sends them through compression; swap of pattern-filled memory.
# A "page" is the kernel's page (zram's slot), 4 or 16 KiB.
. "$(dirname "$0")/lib.sh"
plan $((74 + UNLOAD_CASES))

zram_load
z=$(sysblock 0)
dev=/dev/zram0
mm() { field "$1" $z/mm_stat; }

# page_of BYTES: one page of the 8 given bytes (\xNN escapes) repeated.
page_of() {
	local i
	# shellcheck disable=SC2059 # (the escapes are the format)
	for ((i = 0; i < PAGE / 8; i++)); do printf "$1"; done
}
page_of '\x00\x00\x00\x00\x00\x00\x00\x00' >/tmp/zero.page
page_of '\xff\xff\xff\xff\xff\xff\xff\xff' >/tmp/ones.page
page_of '\x0d\xf0\xfe\xca\xef\xbe\xad\xde' >/tmp/deadbeef.page
page_of 'aaaaaaaa' >/tmp/a.page
page_of '\x01\x00\x00\x00\x00\x00\x00\x00' >/tmp/one.page
# 64 pages of each pattern
for p in zero ones deadbeef a one; do
	for ((i = 0; i < 64; i++)); do cat /tmp/$p.page; done >/tmp/$p.64
done

check_eq "same_stat mode" 444 "$(stat -c %a $z/same_stat)"
check_eq "same_detection mode" 644 "$(stat -c %a $z/same_detection)"
check_eq "same_detection defaults to 1" 1 "$(cat $z/same_detection)"
echo 64M >$z/disksize
check_eq "same_stat on an empty device" "       0        0" "$(cat $z/same_stat)"

dd if=/tmp/zero.64 of=$dev bs=1M oflag=direct 2>/dev/null
check_eq "64 zero pages: same_pages" 64 "$(mm 6)"
check_eq "64 zero pages: nothing compressed" 0 "$(mm 2)"
check_eq "64 zero pages: nothing allocated" 0 "$(mm 3)"
check_eq "64 zero pages: orig_data_size counts them" $((64 * PAGE)) "$(mm 1)"
check_eq "same_stat: 64 zero pages" "      64        0" "$(cat $z/same_stat)"

offset=64
for p in ones deadbeef a one; do
	dd if=/tmp/$p.64 of=$dev bs=$PAGE seek=$offset oflag=direct 2>/dev/null
	offset=$((offset + 64))
done
check_eq "four non-zero fill words: same_pages" 320 "$(mm 6)"
check_eq "still nothing compressed" 0 "$(mm 2)"
check_eq "same_stat splits zero and non-zero" "      64      256" "$(cat $z/same_stat)"
check_eq "no huge pages" 0 "$(mm 8)"

offset=0
for p in zero ones deadbeef a one; do
	want=$(sha256sum </tmp/$p.64 | cut -d' ' -f1)
	check_eq "$p pages read back (direct)" "$want" "$(dd if=$dev bs=$PAGE skip=$offset count=64 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	offset=$((offset + 64))
done
# Byte ranges of each non-zero pattern through the page cache: at odd offsets, across a 4 KiB
# block, across a page, and (the last) from the pattern's last page into the next pattern.
cat /tmp/zero.64 /tmp/ones.64 /tmp/deadbeef.64 /tmp/a.64 /tmp/one.64 >/tmp/all
echo 3 >/proc/sys/vm/drop_caches
specs="1:1 7:4 13:100 $((BLOCK - 1)):1 $((BLOCK + 4)):9 $((PAGE - 3)):13 $((64 * PAGE - 5)):13"
base=$((64 * PAGE))
for p in ones deadbeef a; do
	for spec in $specs; do
		start=$((base + ${spec%:*})) count=${spec#*:}
		want=$(dd if=/tmp/all bs=1 skip=$start count="$count" 2>/dev/null | od -An -tx1)
		got=$(dd if=$dev bs=1 skip=$start count="$count" 2>/dev/null | od -An -tx1)
		check_eq "bytes ${spec%:*}+$count of the $p pages via the page cache" "$want" "$got"
	done
	base=$((base + 64 * PAGE))
done
# Direct reads into buffers 512 bytes into a page: every page arrives as two sub-page pieces,
# each filled at its own offset.
fio --name=subpage --filename=$dev --direct=1 --rw=read --bs=$PAGE --offset=$((128 * PAGE)) --size=$((64 * PAGE)) \
	--iomem_align=512 --verify=pattern --verify_pattern=0x0df0fecaefbeadde --verify_only=1 \
	--output=/tmp/fio.out >/dev/null 2>&1
rc=$?
check "sub-page reads of same pages at odd buffer offsets (fio pattern verify)" test $rc = 0
[ $rc = 0 ] || tail -15 /tmp/fio.out | sed 's/^/# /'
check_eq "reads allocate nothing" 0 "$(mm 3)"

# Overwrite a same page with random data, then back.
dd if=/dev/urandom of=/tmp/random.page bs=$PAGE count=1 2>/dev/null
dd if=/tmp/random.page of=$dev bs=$PAGE seek=130 oflag=direct 2>/dev/null
check_eq "random over a same page: same_pages" 319 "$(mm 6)"
check_eq "random over a same page: one huge page" 1 "$(mm 8)"
check_eq "random over a same page: compr_data_size" $PAGE "$(mm 2)"
check_eq "random over a same page: orig_data_size unchanged" $((320 * PAGE)) "$(mm 1)"
dd if=/tmp/deadbeef.page of=$dev bs=$PAGE seek=130 oflag=direct 2>/dev/null
check_eq "same page back: same_pages" 320 "$(mm 6)"
check_eq "same page back: no huge page" 0 "$(mm 8)"
check_eq "same page back: nothing compressed" 0 "$(mm 2)"
check_eq "same page back reads the pattern" "$(sha256sum </tmp/deadbeef.page | cut -d' ' -f1)" \
	"$(dd if=$dev bs=$PAGE skip=130 count=1 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
dd if=/tmp/one.page of=$dev bs=$PAGE seek=0 oflag=direct 2>/dev/null
check_eq "a zero page becomes a non-zero same page" "      63      257" "$(cat $z/same_stat)"
blkdiscard -o 0 -l $((64 * PAGE)) $dev
check_eq "discard frees same pages" 256 "$(mm 6)"
check_eq "same_stat after discard" "       0      256" "$(cat $z/same_stat)"
check_eq "discarded same pages read zero" "$(sha256sum </tmp/zero.64 | cut -d' ' -f1)" \
	"$(dd if=$dev bs=$PAGE count=64 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"

# same_detection=0: the same pages are compressed like any other.
check_eq "same_detection 0" OK "$(write_attr $z/same_detection 0)"
check_eq "same_detection reads 0" 0 "$(cat $z/same_detection)"
dd if=/tmp/zero.64 of=$dev bs=1M seek=8 oflag=direct 2>/dev/null
check_eq "with detection off, zero pages are not same pages" 256 "$(mm 6)"
check "with detection off, zero pages are compressed" test "$(mm 2)" -gt 0
check_eq "with detection off, they read back" "$(sha256sum </tmp/zero.64 | cut -d' ' -f1)" \
	"$(dd if=$dev bs=$PAGE skip=$(((8 << 20) / PAGE)) count=64 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
check_eq "same_detection 1" OK "$(write_attr $z/same_detection $'1\n')"
dd if=/tmp/zero.64 of=$dev bs=1M seek=8 oflag=direct 2>/dev/null
check_eq "detection back on: rewritten zero pages are same pages" 320 "$(mm 6)"
check_eq "and their compressed objects are gone" 0 "$(mm 2)"
for bad in 2 -1 x yes ""$'\n'; do
	check_eq "same_detection '$bad': EINVAL" "Invalid argument" "$(write_attr $z/same_detection "$bad")"
done
echo 0 >$z/same_detection
echo 1 >$z/reset
check_eq "reset restores same_detection=1" 1 "$(cat $z/same_detection)"
check_eq "reset zeroes same_stat" "       0        0" "$(cat $z/same_stat)"

# Swap of pattern-filled memory under a memory cgroup limit.
echo 256M >$z/disksize
mkswap /dev/zram0 >/dev/null
swapon /dev/zram0
cg=$(memory_cgroup zram_rs_same memory.max 16M)
mkdir -p /mnt/same
mount -t tmpfs -o size=200M tmpfs /mnt/same
# 60 MiB of patterns whatever the page size, two thirds of them non-zero (deadbeef and a).
reps=$((80 * BLOCK / PAGE))
# The digests are of the data as made, before it reaches the tmpfs (and so the swap); made
# outside the cgroup, whose 16 MiB would not hold a pipeline's buffers beside the tmpfs pages.
patterns() { for i in $(seq 1 $reps); do cat /tmp/zero.64 /tmp/deadbeef.64 /tmp/a.64; done; }
patterns | sha256sum | sed 's|-$|/mnt/same/patterns|' >/tmp/same.sums
head -c 8M /dev/urandom | tee /tmp/same.random | sha256sum | sed 's|-$|/mnt/same/random|' >>/tmp/same.sums
bash -c "
	echo \$\$ > $cg/cgroup.procs
	for i in \$(seq 1 $reps); do cat /tmp/zero.64 /tmp/deadbeef.64 /tmp/a.64; done > /mnt/same/patterns
	cat /tmp/same.random > /mnt/same/random
"
rm -f /tmp/same.random
ktap_print_msg "swap used $(awk '$1 == "/dev/zram0" { print $4 }' /proc/swaps) kB; mm_stat: $(cat $z/mm_stat); same_stat: $(cat $z/same_stat)"
# Zero pages never reach a swap device in 6.12: swap keeps them in its own zero map.
check "non-zero pattern pages were swapped out as same pages (over half of $((reps * 128)))" test "$(field 2 $z/same_stat)" -gt $((reps * 64))
check "data intact while swapped" sha256sum -c --quiet /tmp/same.sums
echo max >$cg/memory.max
check "swapoff" swapoff /dev/zram0
check "data intact after swapoff" sha256sum -c --quiet /tmp/same.sums
check_eq "same pages freed by swapoff" 0 "$(mm 6)"
check_io_ok "$z" "the same-filled pages' swap"
umount /mnt/same
rmdir $cg

rm -f /tmp/*.page /tmp/*.64 /tmp/all /tmp/fio.out /tmp/same.sums
zram_unload
finish
