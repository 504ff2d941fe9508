#!/bin/bash
# Module life cycle: load/unload, num_devices, the block major, hot_add/hot_remove, and that
# unloading leaves no device, class or memory behind.
. "$(dirname "$0")/lib.sh"
plan $((30 + UNLOAD_CASES))

cycles_ok=true
for _ in 1 2 3 4 5; do
	zram_load && [ -b /dev/zram0 ] && rmmod zram_rs && [ ! -e /sys/block/zram0 ] || cycles_ok=false
done
check "modprobe/rmmod five times" $cycles_ok
check "nothing left after rmmod" eval '[ ! -e /sys/class/zram-control ] && ! grep -qw zram /proc/devices && [ ! -e /dev/zram0 ]'

zram_load
check_eq "default num_devices creates exactly zram0" "zram0" "$(ls /sys/block | grep zram | tr '\n' ' ' | sed 's/ $//')"
check "block major registered as zram" grep -qE '^ *[0-9]+ zram$' /proc/devices
check_eq "hot_add mode" 400 "$(stat -c %a /sys/class/zram-control/hot_add)"
check_eq "hot_remove mode" 200 "$(stat -c %a /sys/class/zram-control/hot_remove)"
check_eq "hot_add returns the next id" 1 "$(cat /sys/class/zram-control/hot_add)"
check_eq "hot_add again" 2 "$(cat /sys/class/zram-control/hot_add)"
check "hot_added disks exist" test -b /dev/zram1 -a -b /dev/zram2 -a -d /sys/block/zram2
check_eq "hot_remove 1" OK "$(write_attr /sys/class/zram-control/hot_remove 1)"
check "zram1 is gone" test ! -e /sys/block/zram1
check_eq "hot_add reuses the lowest free id" 1 "$(cat /sys/class/zram-control/hot_add)"
check_eq "hot_remove of a missing id: ENODEV" "No such device" "$(write_attr /sys/class/zram-control/hot_remove 7)"
check_eq "hot_remove -1: EINVAL" "Invalid argument" "$(write_attr /sys/class/zram-control/hot_remove -1)"
check_eq "hot_remove garbage: EINVAL" "Invalid argument" "$(write_attr /sys/class/zram-control/hot_remove x1)"
check_eq "hot_remove 2^31: ERANGE" "Numerical result out of range" "$(write_attr /sys/class/zram-control/hot_remove 2147483648)"
check_eq "hot_remove of a bare newline: EINVAL" "Invalid argument" "$(write_attr /sys/class/zram-control/hot_remove $'\n')"
exec 3</dev/zram2
check_eq "hot_remove of an open device: EBUSY" "Device or resource busy" "$(write_attr /sys/class/zram-control/hot_remove 2)"
exec 3<&-
check_eq "hot_remove after close" OK "$(write_attr /sys/class/zram-control/hot_remove 2)"
echo 16M >/sys/block/zram1/disksize
dd if=/dev/urandom of=/dev/zram1 bs=1M count=4 2>/dev/null
check_eq "hot_remove of an initialised device with data" OK "$(write_attr /sys/class/zram-control/hot_remove 1)"
rmmod zram_rs
check "rmmod after hot_add/hot_remove" test ! -e /sys/class/zram-control

zram_load num_devices=4
check_eq "num_devices=4" "zram0 zram1 zram2 zram3" "$(ls /sys/block | grep zram | tr '\n' ' ' | sed 's/ $//')"
check "four block devices" test -b /dev/zram3
check_eq "hot_add after num_devices=4" 4 "$(cat /sys/class/zram-control/hot_add)"
rmmod zram_rs

zram_load num_devices=0
check_eq "num_devices=0 creates none" "" "$(ls /sys/block | grep zram)"
check "zram-control exists with no devices" test -e /sys/class/zram-control/hot_add
rmmod zram_rs

# Memory comes back: store 96 MiB of random data on each of two devices (32 MiB on the debug
# kernel, where KASAN makes every byte slow and free memory inexact), unload, compare. A first
# round warms up the kernel's caches so that the measured round sees only zram_rs.
mib=$((DEBUG_KERNEL ? 32 : 96))
dd if=/dev/urandom of=/tmp/random bs=1M count=$mib 2>/dev/null
fill_two_devices() {
	zram_load num_devices=2
	echo 128M >/sys/block/zram0/disksize
	echo 128M >/sys/block/zram1/disksize
	dd if=/tmp/random of=/dev/zram0 bs=1M oflag=direct 2>/dev/null
	dd if=/tmp/random of=/dev/zram1 bs=1M oflag=direct 2>/dev/null
}
# Free memory as the page allocator holds it: MemFree counts only the buddy lists, and the
# per-CPU page lists beside them grow and shrink by tens of MiB as pages are freed in bulk.
settled_free_kb() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	echo $(($(mem_free_kb) + $(awk '/^ +count:/ { n += $2 } END { print n }' /proc/zoneinfo) * PAGE / 1024))
}
zspages() {
	awk '/^nr_zspages / { print $2 }' /proc/vmstat
}
fill_two_devices
rmmod zram_rs
before=$(settled_free_kb)
zspages_before=$(zspages)
fill_two_devices
during=$(settled_free_kb)
check "stored data uses memory (free $before kB -> $during kB)" test $((before - during)) -gt $((mib * 2 * 25 / 32 * 1024))
check "zsmalloc holds the $((2 * mib)) MiB ($(zspages) pages)" test $(($(zspages) - zspages_before)) -ge $((2 * mib * (1 << 20) / PAGE))
zram_unload
after=$(settled_free_kb)
rm /tmp/random
ktap_print_msg "free (buddy and per-CPU lists): before load $before kB, with $((2 * mib)) MiB stored $during kB, after rmmod $after kB"
check_eq "rmmod returns every zsmalloc page" "$zspages_before" "$(zspages)"
if [ -e /sys/kernel/debug/kmemleak ]; then
	# KASAN's quarantine holds freed memory back; kmemleak above is the leak check here.
	ktap_test_skip "rmmod gives the memory back (free memory is inexact under KASAN)"
else
	check "rmmod gives the memory back (within 8 MiB of $((2 * mib)) MiB)" test $((before - after)) -lt 8192
fi

finish
