#!/bin/bash
# Compression units (compress_unit and unit_stat, zram_rs extensions): the attribute's modes,
# default, refusals (EINVAL) and EBUSY once initialised, reset to a page; then for each unit
# larger than a page (16 KiB with lz4 and 64 KiB with zstd on 4 KiB pages, 64 KiB with zstd on
# 16 KiB pages): whole units written as one object each (unit_stat), stored smaller than page by
# page (a device of one-page units written the same data beside it), every byte read back
# (whole units, single pages alone, bytes through the page cache; unit_stat's partial reads
# count the pages read by requests that cover part of their unit; whole units decompressed
# straight into a read's pages where they are one huge page's, also after partial overwrites,
# discards and writeback of their pages), partial overwrites and
# discards of units keeping the other pages, same-filled and incompressible units, writes not
# aligned to a unit, ext4 on a device of units, and every counter back to 0 once everything
# is discarded; races of unit writes, page writes, discards and reads over one region;
# writeback of units' pages (each page on its own, the unit's object freed with its last page;
# with compressed_writeback units stay), recompression (units' pages passed over), mem_limit
# (a unit past it refused, its pieces freed), compact (units' pieces moved); swap with
# multi-size THP of the unit's size (folios swapped out whole as units, every page read back).
. "$(dirname "$0")/lib.sh"

# The runs: 16 KiB units with lz4 and 64 KiB units with zstd where a unit is more than a page
# (on 16 KiB pages only the second; on the debug kernels, several times slower, only the second
# too: the most pages per record, through the same code).
runs=()
[ 16384 -gt "$PAGE" ] && [ "$DEBUG_KERNEL" = 0 ] && runs+=("16384 lz4")
[ 65536 -gt "$PAGE" ] && runs+=("65536 zstd")
per_run=33
zram_load num_devices=2
z=$(sysblock 0)
# What C zram of this kernel has (zram_rs built for it has the same): writeback,
# compressed_writeback (7.x), recompression.
has() { [ -e "$z/$1" ] && echo 1 || echo 0; }
WRITEBACK=$(has writeback) COMPRESSED_WB=$(has compressed_writeback) RECOMPRESS=$(has recompress)
plan $((8 + ${#runs[@]} * per_run + 4 + WRITEBACK * (8 + COMPRESSED_WB) + RECOMPRESS * 4 + 4 + 3 + 6 + UNLOAD_CASES))

z1=$(sysblock 1)
dev=/dev/zram0
mm() { field "$1" $z/mm_stat; }
us() { field "$1" $z/unit_stat; }
sha() { sha256sum | cut -d' ' -f1; }
# The device's first 4 MiB (the data's size), read direct.
dev_sha() { dd if=$dev bs=1M count=4 iflag=direct 2>/dev/null | sha; }
# The device's first LENGTH bytes (2 MiB by default) read by one direct read into a
# transparent huge page (tools/dioread.c: the read's pages one bvec, as a large folio's).
dio_sha() {
	echo 1 >/proc/sys/vm/compact_memory 2>/dev/null
	dioread $dev 0 "${1:-$((2 << 20))}" | sha
}
first_sha() { head -c "${2:-$((2 << 20))}" "$1" | sha; }

check_eq "compress_unit mode" 644 "$(stat -c %a $z/compress_unit)"
check_eq "unit_stat mode" 444 "$(stat -c %a $z/unit_stat)"
check_eq "compress_unit defaults to the page size" "$PAGE" "$(cat $z/compress_unit)"
refused=OK
for bad in 0 8192 32768 131072 16k abc " 65536" 0x10000 -65536 18446744073709551616; do
	got=$(write_attr $z/compress_unit "$bad")
	[ "$got" = "Invalid argument" ] || refused="$bad: $got"
done
[ "$PAGE" -gt 4096 ] && { got=$(write_attr $z/compress_unit 4096); [ "$got" = "Invalid argument" ] || refused="4096: $got"; }
check_eq "compress_unit refuses other sizes, and sizes below a page, with EINVAL" OK "$refused"
last=$PAGE
[ ${#runs[@]} = 0 ] || last=${runs[${#runs[@]} - 1]% *}
check_eq "compress_unit takes a unit before disksize" OK "$(write_attr $z/compress_unit "$last")"
check_eq "compress_unit reads back" "$last" "$(cat $z/compress_unit)"
echo 16M >$z/disksize
check_eq "compress_unit once initialised: EBUSY" "Device or resource busy" "$(write_attr $z/compress_unit "$PAGE")"
echo 1 >$z/reset
check_eq "reset restores one page" "$PAGE" "$(cat $z/compress_unit)"

# 4 MiB of programs and libraries (machine code and data that neighbouring pages share), and
# text: what the guest has, in path order.
data=/tmp/units.data
{
	find /bin /sbin /usr/bin /usr/lib /lib -xdev -type f 2>/dev/null | sort | xargs cat 2>/dev/null
	seq 1 400000
} | head -c $((4 << 20)) >$data
dd if=/dev/zero of=$data bs=1 count=0 seek=$((4 << 20)) 2>/dev/null
size=$(stat -c %s $data)
pages=$((size / PAGE))
want=$(sha <$data)
random=/tmp/units.random
head -c $((4 * 65536)) /dev/urandom >$random

for run in "${runs[@]}"; do
	unit=${run% *} algorithm=${run#* }
	n=$((unit / PAGE))
	{
		what="$((unit / 1024)) KiB units, $algorithm"
		echo "$algorithm" >$z/comp_algorithm
		echo "$algorithm" >$z1/comp_algorithm
		echo $unit >$z/compress_unit
		echo 64M >$z/disksize
		echo 64M >$z1/disksize
		dd if=$data of=$dev bs=1M oflag=direct 2>/dev/null
		dd if=$data of=/dev/zram1 bs=1M oflag=direct 2>/dev/null
		objects=$(us 1)
		check "$what: whole units stored as objects ($objects)" test "$objects" -gt 0
		same=$(mm 6)
		by_pages=$(us 5)
		check_eq "$what: unit_stat's pages are the written pages but same-filled ones and units stored page by page" \
			$((pages - same)) $(($(us 2) + by_pages * n))
		check_eq "$what: orig_data_size" "$size" "$(mm 1)"
		unit_bytes=$(mm 2) page_bytes=$(field 2 $z1/mm_stat)
		ktap_print_msg "$what: compr_data_size $unit_bytes against $page_bytes page by page ($objects objects, $by_pages units page by page)"
		# On 4 KiB pages a unit is 4 or 16 pages: smaller (the bench measures by how much). On
		# 16 KiB pages a page is already a unit of 16 KiB: the gain is the data's (reported).
		if [ "$PAGE" = 4096 ]; then
			check "$what: stored smaller than page by page" test "$unit_bytes" -lt "$page_bytes"
		else
			check "$what: stored within 5 % of page by page" test $((unit_bytes * 100)) -lt $((page_bytes * 105))
		fi
		check_eq "$what: read back whole" "$want" "$(dev_sha)"
		decompressions=$(us 3) reads=$(us 4)
		ktap_print_msg "$what: $reads page reads, $decompressions unit decompressions"
		check "$what: a whole unit read decompresses it about once" test $((decompressions * n)) -le $((reads * 2))
		check_eq "$what: whole units read: no partial read" 0 "$(us 6)"
		direct=$(us 8)
		check_eq "$what: read into one huge page: every byte" "$(first_sha $data)" "$(dio_sha)"
		check "$what: ... whole units decompressed straight into its pages ($(($(us 8) - direct)))" \
			test "$(us 8)" -gt "$direct"
		# Single pages alone, in an order that leaves no two of a unit in a row.
		bad=0
		for ((i = 0; i < 48; i++)); do
			p=$(((i * 37 + 5) % pages))
			a=$(dd if=$dev bs=$PAGE skip=$p count=1 iflag=direct 2>/dev/null | sha)
			b=$(dd if=$data bs=$PAGE skip=$p count=1 2>/dev/null | sha)
			[ "$a" = "$b" ] || bad=$((bad + 1))
		done
		check_eq "$what: 48 single pages read alone" 0 $bad
		part=$(us 6)
		ktap_print_msg "$what: $part partial reads of the 48 single pages"
		check "$what: single pages of units read alone are partial reads (1 to 48)" test "$part" -ge 1 -a "$part" -le 48
		echo 3 >/proc/sys/vm/drop_caches
		bad=0
		for start in 1 $((PAGE - 3)) $((unit - 5)) $((unit + 777)) $((3 * unit / 2 + 1)); do
			a=$(dd if=$dev bs=1 skip=$start count=11 2>/dev/null | od -An -tx1)
			b=$(dd if=$data bs=1 skip=$start count=11 2>/dev/null | od -An -tx1)
			[ "$a" = "$b" ] || bad=$((bad + 1))
		done
		check_eq "$what: bytes across pages and units through the page cache" 0 $bad
		# A page in the middle of unit 2 overwritten alone: the unit's object stays for its
		# other pages.
		cp $data /tmp/units.expect
		p=$((2 * n + n / 2))
		dd if=$random of=/tmp/units.expect bs=$PAGE count=1 seek=$p conv=notrunc 2>/dev/null
		dd if=$random of=$dev bs=$PAGE count=1 seek=$p oflag=direct 2>/dev/null
		check_eq "$what: a page of a unit overwritten: the unit's object stays" "$objects" "$(us 1)"
		check_eq "$what: ... and counts one page fewer" $((pages - same - by_pages * n - 1)) "$(us 2)"
		check_eq "$what: ... every page reads as expected" "$(sha </tmp/units.expect)" \
			"$(dev_sha)"
		# Part of a unit discarded: those pages read as zeroes, the others keep their data.
		first=$((5 * n + 1))
		blkdiscard -o $((first * PAGE)) -l $(((n - 2) * PAGE)) $dev
		dd if=/dev/zero of=/tmp/units.expect bs=$PAGE count=$((n - 2)) seek=$first conv=notrunc 2>/dev/null
		check_eq "$what: part of a unit discarded: every page reads as expected" "$(sha </tmp/units.expect)" \
			"$(dev_sha)"
		# The first page of unit 3 overwritten alone: that unit is read page by page.
		dd if=$random of=/tmp/units.expect bs=$PAGE count=1 seek=$((3 * n)) skip=1 conv=notrunc 2>/dev/null
		dd if=$random of=$dev bs=$PAGE count=1 seek=$((3 * n)) skip=1 oflag=direct 2>/dev/null
		check_eq "$what: units with pages overwritten (the first of one) and discarded, read into one huge page" \
			"$(first_sha /tmp/units.expect)" "$(dio_sha)"
		# The rest of that unit discarded: its object goes.
		before=$(us 1)
		blkdiscard -o $((5 * unit)) -l $PAGE $dev
		blkdiscard -o $((6 * unit - PAGE)) -l $PAGE $dev
		dd if=/dev/zero of=/tmp/units.expect bs=$unit count=1 seek=5 conv=notrunc 2>/dev/null
		check_eq "$what: the unit's last pages discarded: its object goes" $((before - 1)) "$(us 1)"
		check_eq "$what: ... and the device reads as expected" "$(sha </tmp/units.expect)" \
			"$(dev_sha)"
		# Whole units rewritten: the old objects go, the new ones come.
		dd if=$data of=$dev bs=$unit count=8 oflag=direct 2>/dev/null
		dd if=$data of=/tmp/units.expect bs=$unit count=8 conv=notrunc 2>/dev/null
		check_eq "$what: units rewritten whole read back" "$(sha </tmp/units.expect)" \
			"$(dev_sha)"
		# A write of units not aligned to one: its partial units at both ends page by page.
		dd if=$data of=$dev bs=$PAGE seek=$((n + 1)) skip=1 count=$((3 * n)) oflag=direct 2>/dev/null
		dd if=$data of=/tmp/units.expect bs=$PAGE seek=$((n + 1)) skip=1 count=$((3 * n)) conv=notrunc 2>/dev/null
		check_eq "$what: a write across units not aligned to one reads back" "$(sha </tmp/units.expect)" \
			"$(dev_sha)"
		# One unit of same-filled pages, one half same-filled, one incompressible.
		base=$((pages / n - 4))
		same0=$(mm 6)
		dd if=/dev/zero of=$dev bs=$unit count=1 seek=$base oflag=direct 2>/dev/null
		dd if=/dev/zero of=/tmp/units.expect bs=$unit count=1 seek=$base conv=notrunc 2>/dev/null
		check_eq "$what: a unit of zero pages: same_pages, no object" "$((same0 + n)) 0" \
			"$(($(mm 6))) $(($(dd if=$dev bs=$unit skip=$base count=1 iflag=direct 2>/dev/null | tr -d '\0' | wc -c)))"
		{ head -c $((unit / 2)) /dev/zero; head -c $((unit / 2)) $data; } >/tmp/units.half
		dd if=/tmp/units.half of=$dev bs=$unit count=1 seek=$((base + 1)) oflag=direct 2>/dev/null
		dd if=/tmp/units.half of=/tmp/units.expect bs=$unit count=1 seek=$((base + 1)) conv=notrunc 2>/dev/null
		by_pages=$(us 5)
		dd if=$random of=$dev bs=$unit count=1 seek=$((base + 2)) oflag=direct 2>/dev/null
		dd if=$random of=/tmp/units.expect bs=$unit count=1 seek=$((base + 2)) conv=notrunc 2>/dev/null
		check_eq "$what: an incompressible unit is stored page by page" $((by_pages + 1)) "$(us 5)"
		check_eq "$what: ... and every page reads as expected" "$(sha </tmp/units.expect)" \
			"$(dev_sha)"
		# Everything discarded: every counter of stored data back to 0.
		blkdiscard $dev
		check_eq "$what: all discarded: unit_stat objects and pages" "0 0" "$(us 1) $(us 2)"
		check_eq "$what: all discarded: orig_data_size, compr_data_size, same_pages" "0 0 0" "$(mm 1) $(mm 2) $(mm 6)"
		# A file system on units: files written through the page cache, read back cold.
		mkfs.ext4 -q -b 4096 $dev
		mkdir -p /tmp/units.mnt
		mount $dev /tmp/units.mnt
		for ((i = 0; i < 6; i++)); do cp $data /tmp/units.mnt/f$i; done
		sync
		umount /tmp/units.mnt
		echo 3 >/proc/sys/vm/drop_caches
		mount $dev /tmp/units.mnt
		bad=0
		for ((i = 0; i < 6; i++)); do [ "$(sha </tmp/units.mnt/f$i)" = "$want" ] || bad=$((bad + 1)); done
		check_eq "$what: ext4: six files read back cold" 0 $bad
		check "$what: ext4: stored in units' objects ($(us 1))" test "$(us 1)" -gt 0
		rm -f /tmp/units.mnt/f0 /tmp/units.mnt/f1
		fstrim /tmp/units.mnt 2>/dev/null
		umount /tmp/units.mnt
		fsck=$(e2fsck -fn $dev 2>&1)
		rc=$?
		[ $rc = 0 ] || echo "$fsck" | sed 's/^/# /'
		check_eq "$what: fsck after trimming" 0 $rc
		# Reset with units stored: everything freed (kmemleak looks on the debug kernel).
		check_eq "$what: reset" OK "$(write_attr $z/reset 1)"
		check_eq "$what: reset: unit_stat zeroed" "0 0 0 0 0 0 0 0" "$(cat $z/unit_stat | xargs)"
		echo 1 >$z1/reset
		check_eq "$what: reset: compress_unit is a page again" "$PAGE" "$(cat $z/compress_unit)"
		check_eq "$what: no decompression failed" 0 "$(field 1 $z/io_stat)"
	}
done

# Races on a device of the largest unit: whole units rewritten, single pages of them
# overwritten, parts discarded and everything read, by four writers and a reader at once over
# the same 2 MiB; then the region written whole once more reads back exactly, and once it is
# discarded every counter of stored data is 0 (a share released twice, or never, would show).
unit=${runs[${#runs[@]} - 1]% *}
unit=${unit:-$PAGE}
echo $unit >$z/compress_unit
echo 64M >$z/disksize
region=$((2 << 20))
end=$(($(date +%s) + 8))
race_units() { while [ "$(date +%s)" -lt $end ]; do dd if=$data of=$dev bs=$unit count=$((region / unit)) oflag=direct 2>/dev/null; done; }
race_pages() { local i=0; while [ "$(date +%s)" -lt $end ]; do dd if=$random of=$dev bs=$PAGE count=1 seek=$(((i * 7 + $1) % (region / PAGE))) oflag=direct 2>/dev/null; i=$((i + 1)); done; }
race_discards() { local i=0; while [ "$(date +%s)" -lt $end ]; do blkdiscard -o $(((i * 3 % (region / PAGE)) * PAGE)) -l $((2 * PAGE)) $dev 2>/dev/null; i=$((i + 1)); done; }
race_reads() { while [ "$(date +%s)" -lt $end ]; do dd if=$dev of=/dev/null bs=64K count=$((region / 65536)) iflag=direct 2>/dev/null; dd if=$dev of=/dev/null bs=$PAGE count=64 skip=5 iflag=direct 2>/dev/null; done; }
race_units &
race_pages 1 &
race_pages 2 &
race_discards &
race_reads &
wait
check_eq "races: no failed reads or writes" "0 0" "$(field 1 $z/io_stat) $(field 2 $z/io_stat)"
dd if=$data of=$dev bs=$unit count=$((region / unit)) oflag=direct 2>/dev/null
check_eq "races: the region written whole again reads back" "$(head -c $region $data | sha)" \
	"$(dd if=$dev bs=64K count=$((region / 65536)) iflag=direct 2>/dev/null | sha)"
blkdiscard $dev
check_eq "races: all discarded: unit_stat objects and pages" "0 0" "$(us 1) $(us 2)"
check_eq "races: all discarded: orig_data_size, compr_data_size, same_pages" "0 0 0" "$(mm 1) $(mm 2) $(mm 6)"
echo 1 >$z/reset

# Writeback of units' pages (where C zram has writeback): a unit's page is written back on its
# own, decompressed, and the unit's object goes with its last page; written-back pages read
# back from the backing device. With compressed_writeback (7.x) units' pages stay in memory.
# Text (never same-filled pages), 1 MiB of the largest unit.
unit=${runs[${#runs[@]} - 1]% *}
unit=${unit:-$PAGE}
text=/tmp/units.text
seq 1 300000 | head -c $((1 << 20)) >$text
text_pages=$(((1 << 20) / PAGE))
if [ "$WRITEBACK" = 1 ]; then
	truncate -s 32M /tmp/units-wb.img
	loop=$(losetup -f)
	losetup "$loop" /tmp/units-wb.img
	echo $loop >$z/backing_dev
	echo $unit >$z/compress_unit
	echo 16M >$z/disksize
	dd if=$text of=$dev bs=1M oflag=direct 2>/dev/null
	objects=$(us 1)
	check_eq "writeback: the text stored in units ($objects objects)" "$text_pages" "$(us 2)"
	# (bd_stat counts 4 KiB blocks: a page is PAGE / 4096 of them)
	check_eq "writeback of one unit's page (page_index=1)" "OK $((PAGE / 4096))" \
		"$(write_attr $z/writeback page_index=1) $(field 1 $z/bd_stat)"
	check_eq "... the unit's object stays for its other pages; one page split off (unit_stat)" \
		"$objects $((text_pages - 1)) 1" "$(us 1) $(us 2) $(us 7)"
	# Page 1 rewritten and written back again: its block holds other bytes than its place in
	# the unit's object, which stays for the unit's other pages.
	cp $text /tmp/units.wb
	dd if=$random of=/tmp/units.wb bs=$PAGE count=1 seek=1 conv=notrunc 2>/dev/null
	dd if=$random of=$dev bs=$PAGE count=1 seek=1 oflag=direct 2>/dev/null
	check_eq "... rewritten, written back again; read into one huge page: that page from the backing device, its unit's others from the object" \
		"OK $(sha </tmp/units.wb)" "$(write_attr $z/writeback page_index=1) $(dio_sha $((1 << 20)))"
	echo all >$z/idle
	check_eq "writeback idle: every unit's page written back (split off), no unit object left" \
		"OK 0 0 $((text_pages * PAGE / 4096)) $text_pages" \
		"$(write_attr $z/writeback idle) $(us 1) $(us 2) $(field 1 $z/bd_stat) $(us 7)"
	check_eq "... compr_data_size 0, orig_data_size every page" "0 $((1 << 20))" "$(mm 2) $(mm 1)"
	check_eq "... every page reads back from the backing device" "$(sha </tmp/units.wb)" \
		"$(dd if=$dev bs=1M count=1 iflag=direct 2>/dev/null | sha)"
	blkdiscard $dev
	check_eq "... discarded: bd_stat and orig_data_size 0" "0 0" "$(field 1 $z/bd_stat) $(mm 1)"
	echo 1 >$z/reset
	if [ "$COMPRESSED_WB" = 1 ]; then
		echo 1 >$z/compressed_writeback
		echo $loop >$z/backing_dev
		echo $unit >$z/compress_unit
		echo 16M >$z/disksize
		dd if=$text of=$dev bs=1M oflag=direct 2>/dev/null
		objects=$(us 1)
		echo all >$z/idle
		check_eq "compressed_writeback: units' pages stay in memory" "OK $objects $text_pages 0 0" \
			"$(write_attr $z/writeback idle) $(us 1) $(us 2) $(field 1 $z/bd_stat) $(us 7)"
		echo 1 >$z/reset
		echo 0 >$z/compressed_writeback
	fi
	losetup -d $loop
	rm -f /tmp/units-wb.img /tmp/units.wb
fi

# Recompression (where C zram has it) passes units' pages over: they keep their object and
# read back; a page stored on its own beside them is recompressed.
if [ "$RECOMPRESS" = 1 ]; then
	echo $unit >$z/compress_unit
	echo lz4 >$z/comp_algorithm
	echo "algo=zstd priority=1" >$z/recomp_algorithm
	echo 16M >$z/disksize
	dd if=$text of=$dev bs=1M oflag=direct 2>/dev/null
	dd if=$text of=$dev bs=$PAGE count=1 seek=$((2 * text_pages)) oflag=direct 2>/dev/null
	objects=$(us 1)
	echo all >$z/idle
	check_eq "recompress: OK" OK "$(write_attr $z/recompress "type=idle priority=1")"
	check_eq "... the page on its own recompressed (block_state's r)" r \
		"$(awk -v i=$((2 * text_pages)) '$1 == i { print substr($3, 5, 1) }' /sys/kernel/debug/zram/zram0/block_state)"
	check_eq "recompress passes units' pages over" "$objects $text_pages" "$(us 1) $(us 2)"
	check_eq "... and they read back" "$(sha <$text)" \
		"$(dd if=$dev bs=1M count=1 iflag=direct 2>/dev/null | sha)"
	echo 1 >$z/reset
fi

# mem_limit: a unit whose pieces take the pool past the limit is refused (ENOMEM, a failed
# write, as C refuses a page) and its pieces freed; what was stored before reads back, and
# once all is discarded nothing is left.
# The text: every unit of it is stored as an object (none page by page, which has its own
# check), 1 MiB in more than 128 KiB.
echo $unit >$z/compress_unit
echo 128K >$z/mem_limit
echo 16M >$z/disksize
dd if=$text of=$dev bs=$unit oflag=direct 2>/dev/null
stored=$(mm 1)
check "mem_limit: writes of units past the limit failed ($(field 2 $z/io_stat) failed, $stored bytes stored)" \
	test "$(field 2 $z/io_stat)" -gt 0 -a "$stored" -gt 0
check "mem_limit: mem_used_total ($(mm 3)) within the limit and one unit's pieces" \
	test "$(mm 3)" -le $(((128 << 10) + 2 * unit))
good=$((stored / unit))
check_eq "mem_limit: the units stored first read back" "$(head -c $((good * unit)) $text | sha)" \
	"$(dd if=$dev bs=$unit count=$good iflag=direct 2>/dev/null | sha)"
blkdiscard $dev
check_eq "mem_limit: all discarded: unit_stat objects and pages, compr_data_size" "0 0 0" "$(us 1) $(us 2) $(mm 2)"
echo 1 >$z/reset

# compact: a unit's pieces are zsmalloc objects reached through their handles, which
# compaction keeps valid while it moves them. 96 units, each of its own text (a line naming
# it, repeated, after 900 letters of its own), compress to pieces of about the same size
# class, many to a zspage; every other unit discarded leaves those zspages half used, compact
# moves objects (mm_stat's pages_compacted grows) and every unit left reads back.
count=96
awk -v n=$count -v u=$unit 'BEGIN {
	srand(27)
	for (i = 0; i < n; i++) {
		s = ""
		for (j = 0; j < 900; j++) s = s sprintf("%c", 97 + int(rand() * 26))
		# (doubled up to the unit: appending a line at a time would copy the whole unit each time)
		rep = sprintf("compression unit %d of the compact case\n", i)
		while (length(rep) < u) rep = rep rep
		printf "%s", substr(s rep, 1, u)
	}
}' >/tmp/units.compact
echo $unit >$z/compress_unit
echo 16M >$z/disksize
dd if=/tmp/units.compact of=$dev bs=1M oflag=direct 2>/dev/null
cp /tmp/units.compact /tmp/units.expect
for ((u = 0; u < count; u += 2)); do
	blkdiscard -o $((u * unit)) -l $unit $dev
	dd if=/dev/zero of=/tmp/units.expect bs=$unit count=1 seek=$u conv=notrunc 2>/dev/null
done
compacted=$(mm 7)
check_eq "compact with units' pieces in the pool ($(us 1) objects)" OK "$(write_attr $z/compact 1)"
check "... moved objects (pages_compacted $compacted -> $(mm 7))" test "$(mm 7)" -gt "$compacted"
check_eq "... and every unit left reads back" "$(sha </tmp/units.expect)" \
	"$(dd if=$dev bs=$unit count=$count iflag=direct 2>/dev/null | sha)"
echo 1 >$z/reset
rm -f /tmp/units.compact

# Swap with multi-size THP of the unit's size: anonymous folios of a unit swapped out whole
# are stored as units (unit_stat counts the reads of their pages), every page memfill wrote
# reads back as written
# (swapped in page by page or as folios, as the kernel does), and swapoff frees every unit.
# Skipped where the kernel has no such THP size. 64 MiB through a 16 MiB cgroup (32 on the debug
# kernels).
unit=${runs[0]% *}
unit=${unit:-$PAGE}
if [ "$unit" -gt "$PAGE" ] && mthp_on $unit; then
	echo $unit >$z/compress_unit
	echo 128M >$z/disksize
	mkswap $dev >/dev/null
	check "mTHP swap: swapon" swapon $dev
	cg=$(memory_cgroup zram_rs_units memory.high 16M)
	bash -c "echo \$\$ > $cg/cgroup.procs; memfill $((64 >> DEBUG_KERNEL)) 1 > /tmp/units.memfill 2>&1; echo \$? > /tmp/units.memfill.rc"
	mthp_off
	ktap_print_msg "mTHP swap of $((unit / 1024)) KiB folios: unit_stat after memfill: $(cat $z/unit_stat); mm_stat $(cat $z/mm_stat); $(grep -h . /sys/kernel/mm/transparent_hugepage/hugepages-$((unit / 1024))kB/stats/swpout 2>/dev/null | sed 's/^/swpout /')"
	# Swapped-in pages are freed from zram at once (a synchronous device): what shows is the
	# reads of units' pages and the decompressions they took. arm64 swaps large folios out
	# whole only with 4 KiB pages (its Kconfig selects ARCH_WANTS_THP_SWAP only there): with
	# 16 KiB pages they are split, stored page by page, and only the rest applies.
	if [ "$(uname -m)" = aarch64 ] && [ "$PAGE" != 4096 ]; then
		ktap_test_skip "mTHP swap: folios swapped out as units: arm64 with $((PAGE / 1024)) KiB pages splits them (no THP_SWAP)"
	else
		check "mTHP swap: folios swapped out as units were read back through them ($(us 4) page reads, $(us 3) decompressions)" \
			test "$(us 4)" -gt 0
	fi
	check_eq "mTHP swap: memfill read every page back as written" 0 "$(cat /tmp/units.memfill.rc)"
	[ "$(cat /tmp/units.memfill.rc)" = 0 ] || sed 's/^/# /' /tmp/units.memfill | head -5
	check "mTHP swap: swapoff" swapoff $dev
	check_eq "mTHP swap: swapoff freed every unit" "0 0" "$(us 1) $(us 2)"
	check_eq "mTHP swap: reset" OK "$(write_attr $z/reset 1)"
	rmdir $cg
	rm -f /tmp/units.memfill /tmp/units.memfill.rc
else
	for c in swapon "folios swapped out as units read back" "memfill read back" swapoff "swapoff freed every unit" reset; do
		ktap_test_skip "mTHP swap: $c: no $((unit / 1024)) KiB THP on this kernel"
	done
fi

rm -rf $data $random $text /tmp/units.expect /tmp/units.half /tmp/units.mnt
zram_unload
finish
