#!/bin/bash
# ext4 on zram_rs: mkfs (which discards the whole disk), mount, files, umount, fsck clean,
# remount with data intact, and reset refused while mounted.
. "$(dirname "$0")/lib.sh"
plan $((10 + UNLOAD_CASES))

zram_load
z=$(sysblock 0)
echo 64M >$z/disksize
check "mkfs.ext4" mkfs.ext4 -q /dev/zram0
mkdir -p /mnt/zram
check "mount" mount -t ext4 /dev/zram0 /mnt/zram

dd if=/dev/urandom of=/tmp/blob bs=1M count=8 2>/dev/null
ok=true
for d in 1 2 3; do
	mkdir -p /mnt/zram/dir$d || ok=false
	cp /tmp/blob /mnt/zram/dir$d/blob || ok=false
	seq 1 20000 >/mnt/zram/dir$d/numbers || ok=false
done
check "files written" $ok
check_eq "reset while mounted: EBUSY" "Device or resource busy" "$(write_attr $z/reset 1)"
check "umount" umount /mnt/zram
e2fsck -fn /dev/zram0 >/tmp/fsck.out 2>&1
rc=$?
check_eq "e2fsck finds the filesystem clean" 0 $rc
[ $rc = 0 ] || sed 's/^/# /' /tmp/fsck.out
echo 3 >/proc/sys/vm/drop_caches
mount -t ext4 /dev/zram0 /mnt/zram
ok=true
for d in 1 2 3; do
	cmp -s /tmp/blob /mnt/zram/dir$d/blob || ok=false
	seq 1 20000 | cmp -s - /mnt/zram/dir$d/numbers || ok=false
done
check "files intact after remount" $ok
rm -rf /mnt/zram/dir2
sync
check "fstrim-free delete and umount" umount /mnt/zram
check "e2fsck clean after delete" e2fsck -fn /dev/zram0
check_eq "reset after umount" OK "$(write_attr $z/reset 1)"

rm -f /tmp/blob /tmp/fsck.out
zram_unload
finish
