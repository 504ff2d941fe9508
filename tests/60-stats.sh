#!/bin/bash
# mm_stat and io_stat arithmetic against what the test wrote: random pages do not compress
# and count as huge, zero pages are same-filled pages and take no memory. Counts are in kernel
# pages (zram's slots), whatever the page size.
. "$(dirname "$0")/lib.sh"
plan $((24 + UNLOAD_CASES))

zram_load
z=$(sysblock 0)
echo 16M >$z/disksize
dev=/dev/zram0
mm() { field "$1" $z/mm_stat; }

dd if=/dev/urandom of=$dev bs=$PAGE count=100 oflag=direct 2>/dev/null
check_eq "orig_data_size = 100 pages" $((100 * PAGE)) "$(mm 1)"
check_eq "compr_data_size = 100 random pages stored whole" $((100 * PAGE)) "$(mm 2)"
check "mem_used_total covers the data" test "$(mm 3)" -ge $((100 * PAGE))
check_eq "mem_limit is 0 (none)" 0 "$(mm 4)"
check "mem_used_max >= mem_used_total" test "$(mm 5)" -ge "$(mm 3)"
check_eq "same_pages (random data has none)" 0 "$(mm 6)"
check_eq "huge_pages" 100 "$(mm 8)"
check_eq "huge_pages_since" 100 "$(mm 9)"

dd if=/dev/urandom of=$dev bs=$PAGE count=100 oflag=direct 2>/dev/null
check_eq "overwriting keeps orig_data_size" $((100 * PAGE)) "$(mm 1)"
check_eq "overwriting keeps huge_pages" 100 "$(mm 8)"
check_eq "huge_pages_since counts every store" 200 "$(mm 9)"

dd if=/dev/zero of=$dev bs=$PAGE count=50 seek=200 oflag=direct 2>/dev/null
check_eq "50 more pages" $((150 * PAGE)) "$(mm 1)"
check_eq "zero pages are not huge" 100 "$(mm 8)"
check_eq "zero pages are same pages" 50 "$(mm 6)"
check_eq "zero pages take no compressed bytes" $((100 * PAGE)) "$(mm 2)"
dd if=$dev of=/dev/null bs=$PAGE count=400 iflag=direct 2>/dev/null
check_eq "reads change nothing" $((150 * PAGE)) "$(mm 1)"
blkdiscard -o $((10 * PAGE)) -l $((10 * PAGE)) $dev
check_eq "discard of 10 pages" $((140 * PAGE)) "$(mm 1)"
blkdiscard -o $((300 * PAGE)) -l $((10 * PAGE)) $dev
check_eq "discard of unwritten pages changes no size" $((140 * PAGE)) "$(mm 1)"
check_eq "notify_free counts every discarded page" 20 "$(field 4 $z/io_stat)"
check_eq "huge_pages after discarding 10 random pages" 90 "$(mm 8)"
check_eq "compr_data_size after discard" $((90 * PAGE)) "$(mm 2)"
check_eq "io_stat has no failures" "0 0" "$(field 1 $z/io_stat) $(field 2 $z/io_stat)"
max=$(mm 5)

echo 1 >$z/reset
echo 16M >$z/disksize
check_eq "reset zeroes mm_stat" "       0        0        0        0        0        0        0        0        0" "$(cat $z/mm_stat)"
check_eq "reset zeroes io_stat" "       0        0 0        0" "$(cat $z/io_stat)"
ktap_print_msg "mem_used_max before reset was $max"

zram_unload
finish
