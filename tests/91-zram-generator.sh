#!/bin/bash
# systemd's zram-generator (Debian 12's systemd-zram-generator, unchanged) against C zram and
# zram_rs in this boot: its generator run (which loads the module with `modprobe zram`, through
# the package's modprobe configuration for zram_rs, and hot-adds the second device), then what
# systemd does with the units it wrote: the package's systemd-zram-setup@.service ExecStart
# (`zram-generator --setup-device`, which sets the algorithm, writeback device and size and
# runs systemd-makefs), the swap unit's and mount unit's commands as systemd 252 runs them
# (`swapon --fixpgsz -p PRIORITY -o OPTIONS WHAT`, `mount WHAT WHERE -o OPTIONS`), and on the
# way down umount, swapoff and the service's ExecStop (`--reset-device`). systemd itself does not
# run in the guest. The two transcripts must match line for line. x86_64 guests only (the
# clients are fetched for x86_64: scripts/clients.sh).
. "$(dirname "$0")/lib.sh"
# The clients are fetched for x86_64 guests only.
if [ ! -x /lib/systemd/system-generators/zram-generator ]; then
	plan 1
	ktap_test_skip "zram-generator is not in this guest (x86_64 only: scripts/clients.sh)"
	finish
	exit 0
fi
lines=27
plan $((lines + 2 + 2 + UNLOAD_CASES))
generator=/lib/systemd/system-generators/zram-generator
service=/lib/systemd/system/systemd-zram-setup@.service
ktap_print_msg "clients: $(paste -sd, /tests/clients-versions)"

# zram0: swap of an eighth of the RAM, zstd, priority 77, writing back to /dev/vda; zram1: an
# ext4 file system of 32 MiB with lz4, mounted.
mkdir -p /etc/systemd
cat >/etc/systemd/zram-generator.conf <<'CONF'
[zram0]
zram-size = ram / 8
compression-algorithm = zstd
swap-priority = 77
writeback-device = /dev/vda

[zram1]
zram-size = 32
compression-algorithm = lz4
fs-type = ext4
mount-point = /mnt/zram1
CONF

selected() {
	sed 's/.*\[\([^]]*\)\].*/\1/' "/sys/block/$1/comp_algorithm"
}
# unit_key UNIT KEY: the value of KEY= in a generated unit.
unit_key() {
	sed -n "s/^$2=//p" "$1"
}

# scenario MODULE: the transcript; MODULE is the driver `modprobe zram` should load.
scenario() {
	local out=/run/zram-generator dev unit rc cmd
	rm -rf $out
	mkdir -p $out
	$generator $out $out $out >/tmp/generator.log 2>&1
	echo "generator: rc $?"
	echo "modprobe zram loaded the expected driver: $([ "$(drivers_loaded)" = "$1" ] && echo yes || echo "no, $(drivers_loaded)")"
	echo "devices: $(ls /sys/block | grep '^zram' | paste -sd' ')"
	echo "units: $(cd $out && find . -mindepth 1 | sort | paste -sd' ')"
	for unit in $(cd $out && find . -type f | sort); do
		echo "unit $unit: $(grep -v '^#' "$out/$unit" | grep -v '^$' | paste -sd'|')"
	done
	for dev in zram0 zram1; do
		cmd=$(sed -n 's/^ExecStart=//p' $service)
		eval "${cmd//%i/$dev}" >>/tmp/generator.log 2>&1
		echo "setup $dev: rc $?"
		echo "$dev: algorithm $(selected $dev), disksize $(cat /sys/block/$dev/disksize), backing_dev $(cat /sys/block/$dev/backing_dev), initstate $(cat /sys/block/$dev/initstate)"
		echo "$dev: blkid $(blkid /dev/$dev | grep -o 'TYPE="[^"]*"\|LABEL="[^"]*"' | sort | paste -sd' ')"
	done
	unit=$out/dev-zram0.swap
	swapon --fixpgsz -p "$(unit_key $unit Priority)" -o "$(unit_key $unit Options)" "$(unit_key $unit What)"
	echo "swap unit started: rc $?"
	echo "swaps: $(awk '$1 == "/dev/zram0" { print $1, $2, $3, $5 }' /proc/swaps)"
	unit=$out/mnt-zram1.mount
	mkdir -p "$(unit_key $unit Where)"
	mount "$(unit_key $unit What)" "$(unit_key $unit Where)" -o "$(unit_key $unit Options)"
	echo "mount unit started: rc $?"
	echo "mounts: $(awk '$2 == "/mnt/zram1" { print $1, $2, $3 }' /proc/mounts), discard $(grep -c '/mnt/zram1 .*discard' /proc/mounts)"
	dd if=/dev/urandom of=/tmp/generator.data bs=1M count=4 2>/dev/null
	cp /tmp/generator.data /mnt/zram1/data && sync && echo 3 >/proc/sys/vm/drop_caches
	echo "file on zram1 reads back: $(cmp -s /tmp/generator.data /mnt/zram1/data && echo yes || echo no)"
	echo "zram0 mm_stat orig_data_size same_pages huge_pages: $(awk '{ print $1, $6, $8 }' /sys/block/zram0/mm_stat)"
	umount /mnt/zram1
	echo "mount unit stopped: rc $?"
	swapoff /dev/zram0
	echo "swap unit stopped: rc $?"
	for dev in zram0 zram1; do
		cmd=$(sed -n 's/^ExecStop=//p' $service)
		eval "${cmd//%i/$dev}" >>/tmp/generator.log 2>&1
		echo "stop $dev: rc $?"
		echo "$dev: initstate $(cat /sys/block/$dev/initstate), disksize $(cat /sys/block/$dev/disksize), backing_dev $(cat /sys/block/$dev/backing_dev)"
	done
	modprobe -r zram
	echo "modprobe -r zram: rc $?, loaded $(drivers_loaded)"
	rm -f /tmp/generator.data
}

scenario zram >/tmp/generator.c 2>&1
cp /tmp/generator.log /tmp/generator.log.c
ln -s /usr/share/zram-rs-dkms/zram_rs-as-zram.conf /etc/modprobe.d/zram_rs-as-zram.conf
scenario zram_rs >/tmp/generator.rs 2>&1
rm /etc/modprobe.d/zram_rs-as-zram.conf
while read -r line; do ktap_print_msg "C: $line"; done </tmp/generator.c
while read -r line; do ktap_print_msg "zram_rs log: $line"; done </tmp/generator.log
compare_transcripts /tmp/generator.c /tmp/generator.rs $lines
check "the generator made zram0 swap with the configured priority" grep -q '^swaps: /dev/zram0 partition [0-9]* 77$' /tmp/generator.rs
check "and zram1 an ext4 file system on /mnt/zram1" grep -q '^mounts: /dev/zram1 /mnt/zram1 ext4, discard 1$' /tmp/generator.rs

zram_load
zram_unload
finish
