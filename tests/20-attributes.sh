#!/bin/bash
# The per-device attributes of this release: modes, read formats, parsing and errnos of
# disksize, initstate, reset, mm_stat and io_stat, matching C zram.
. "$(dirname "$0")/lib.sh"
plan $((50 + UNLOAD_CASES))

zram_load
z=$(sysblock 0)
for spec in disksize:644 initstate:444 reset:200 mm_stat:444 io_stat:444; do
	check_eq "mode of ${spec%:*}" "${spec#*:}" "$(stat -c %a "$z/${spec%:*}")"
done
check_eq "disksize before init" 0 "$(cat $z/disksize)"
check_eq "initstate before init" 0 "$(cat $z/initstate)"
check_eq "mm_stat before init" "       0        0        0        0        0        0        0        0        0" "$(cat $z/mm_stat)"
check_eq "io_stat before init" "       0        0 0        0" "$(cat $z/io_stat)"
check_eq "logical block size is 4 KiB on every page size" $BLOCK "$(cat /sys/block/zram0/queue/logical_block_size)"
check_eq "capacity 0 before init" 0 "$(cat $z/size)"

# Bad input, before initialisation: C zram's errnos.
for bad in $'\n' "abc" "0" "0K" "-1" " 1M"; do
	check_eq "disksize '$bad' is EINVAL" "Invalid argument" "$(write_attr $z/disksize "$bad")"
done
# Rounded up to pages it wraps to 0: 6.12 and 7.2 then fail the allocation (C 7.2 with a
# warning from vmalloc, zram_rs without), 7.3 refuses the size. 2^64 itself is 0 on 6.12,
# whose memparse wraps (EINVAL), and wraps when rounded from 7.x on, whose memparse saturates.
if [ $ABI_7_3 = 0 ] || [ $ABI_7_2 = 1 ]; then
	wrapped="Cannot allocate memory"
else
	wrapped="Invalid argument"
fi
two64=$wrapped
[ $ABI_7_3 = 1 ] || two64="Invalid argument"
check_eq "disksize 2^64 as C of this kernel" "$two64" "$(write_attr $z/disksize 18446744073709551616)"
check_eq "disksize within a page of 2^64 as C of this kernel" "$wrapped" "$(write_attr $z/disksize 18446744073709551615)"
check_eq "disksize 1E is ENOMEM" "Cannot allocate memory" "$(write_attr $z/disksize 1E)"
check_eq "still uninitialised after bad writes" 0 "$(cat $z/initstate)"

# Good input: memparse suffixes, bases, rounding up to the kernel's page, trailing garbage ignored.
try_size() {
	local input=$1 expected=$2
	write_attr $z/reset 1 >/dev/null
	local result
	result=$(write_attr $z/disksize "$input")
	check_eq "disksize '$input' reads back $expected" "OK $expected" "$result $(cat $z/disksize)"
}
try_size 64M 67108864
try_size 1g 1073741824
try_size 4097 $(((4097 + PAGE - 1) / PAGE * PAGE))
try_size 1 $PAGE
try_size 0x100000 1048576
try_size 010000 $PAGE
try_size 2K $PAGE
try_size "8M garbage" 8388608
try_size $'16m\n' 16777216
check_eq "initstate after init" 1 "$(cat $z/initstate)"
check_eq "capacity in sectors" 32768 "$(cat $z/size)"
check_eq "disksize when initialised: EBUSY" "Device or resource busy" "$(write_attr $z/disksize 32M)"
check_eq "disksize unchanged" 16777216 "$(cat $z/disksize)"

# reset
for bad in $'\n' "0" "abc" "-1" "1 " $'1\n\n'; do
	check_eq "reset '$bad' is EINVAL" "Invalid argument" "$(write_attr $z/reset "$bad")"
done
check_eq "reset 65536 is ERANGE" "Numerical result out of range" "$(write_attr $z/reset 65536)"
check_eq "still initialised" 1 "$(cat $z/initstate)"
exec 3</dev/zram0
check_eq "reset while open: EBUSY" "Device or resource busy" "$(write_attr $z/reset 1)"
exec 3<&-
check_eq "reset +1 works" OK "$(write_attr $z/reset +1)"
check_eq "initstate after reset" 0 "$(cat $z/initstate)"
check_eq "disksize after reset" 0 "$(cat $z/disksize)"
check_eq "capacity after reset" 0 "$(cat $z/size)"
check_eq "reset of an uninitialised device" OK "$(write_attr $z/reset 1)"
check "reading an uninitialised device gives nothing" test "$(dd if=/dev/zram0 bs=4k count=1 2>/dev/null | wc -c)" = 0
check_eq "re-initialise after reset" OK "$(write_attr $z/disksize 4M)"

zram_unload
finish
