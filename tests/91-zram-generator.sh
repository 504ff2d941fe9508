#!/bin/bash
# systemd's zram-generator, unchanged, against C zram and zram_rs in this boot: Debian 12's
# (systemd-zram-generator 1.1.2) and Debian 13's (1.2.1, the first that sets recompression
# algorithms and their parameters). For each: its generator run (which loads the module with
# `modprobe zram`, through the package's modprobe configuration for zram_rs, and hot-adds the
# second device), then what systemd does with the units it wrote: the package's
# systemd-zram-setup@.service ExecStart (`zram-generator --setup-device`, which sets the
# algorithms, their parameters, the writeback device, the memory limit and the size and runs
# systemd-makefs), the swap unit's and mount unit's commands as systemd runs them (`swapon
# --fixpgsz -p PRIORITY -o OPTIONS WHAT`, `mount WHAT WHERE -o OPTIONS`), and on the way down
# umount, swapoff and the service's ExecStop (`--reset-device`). With Debian 13's, the idle
# pages of the mounted device are recompressed with its secondary algorithm, as an
# administrator or a timer would. systemd itself does not run in the guest. Each generator's two
# transcripts must match line for line. x86_64 guests only (the clients are fetched for x86_64:
# scripts/clients.sh).
. "$(dirname "$0")/lib.sh"
# The clients are fetched for x86_64 guests only.
if [ ! -x /lib/systemd/system-generators/zram-generator ]; then
	plan 1
	ktap_test_skip "zram-generator is not in this guest (x86_64 only: scripts/clients.sh)"
	finish
	exit 0
fi
. /guest/records.sh
# Where C zram of this kernel has no recompression (Debian's), neither has zram_rs: the
# generator's recompression settings fail alike in both, zram1 is not recompressed (four lines
# fewer) and the two recompression cases are skipped.
c_algorithms
lines_12=29 lines_13=$((29 + 4 * MULTI_COMP))
plan $((lines_12 + 2 + 2 + lines_13 + 2 + 3 + UNLOAD_CASES))
ktap_print_msg "clients: $(paste -sd, /tests/clients-versions)"

# Debian 12's: zram0 swap of an eighth of the RAM, zstd, priority 77, writing back to /dev/vda;
# zram1 an ext4 file system of 32 MiB with lz4, mounted.
config_12='[zram0]
zram-size = ram / 8
compression-algorithm = zstd
swap-priority = 77
writeback-device = /dev/vda

[zram1]
zram-size = 32
compression-algorithm = lz4
fs-type = ext4
mount-point = /mnt/zram1'
# Debian 13's: zram0 as above with its manual page's example algorithms (lzo-rle, recompressed
# with zstd at level 3, idle pages), and a memory limit of a sixteenth of the RAM; zram1 ext4,
# lz4 at level 1 recompressed with zstd.
config_13='[zram0]
zram-size = ram / 8
zram-resident-limit = ram / 16
compression-algorithm = lzo-rle zstd(level=3) (type=idle)
swap-priority = 77
writeback-device = /dev/vda

[zram1]
zram-size = 32
compression-algorithm = lz4(level=1) zstd
fs-type = ext4
mount-point = /mnt/zram1'

selected() {
	sed 's/.*\[\([^]]*\)\].*/\1/' "/sys/block/$1/comp_algorithm"
}
# unit_key UNIT KEY: the value of KEY= in a generated unit.
unit_key() {
	sed -n "s/^$2=//p" "$1"
}
# said: what the generator logged (to the kernel log) since the last `kmsg_mark generator`, one
# line, each message after ", " without its process id.
said() {
	kmsg_since generator | sed -n 's/^\[[^]]*\] //; s/^\(zram_generator[^[]*\)\[[0-9]*\]: /\1: /p' |
		sed 's/^/, /' | paste -sd' '
}
# service_command DIRECTIVE DEVICE: the service's ExecStart or ExecStop for DEVICE, run as
# systemd runs it; its output goes to the generator's log, its status and what it logged to the
# transcript.
service_command() {
	local cmd rc
	cmd=$(sed -n "s/^$1=//p" "$service")
	kmsg_mark generator
	eval "${cmd//%i/$2}" >>/tmp/generator.log 2>&1
	rc=$?
	echo "$1 $2: rc $rc$(said)"
}

# scenario MODULE: the transcript of the generator in $generator with the service file in
# $service; MODULE is the driver `modprobe zram` should load. With RECOMPRESS=1, zram1's idle
# pages are recompressed after the file is written.
scenario() {
	local out=/run/zram-generator dev unit compr
	rm -rf $out
	mkdir -p $out
	kmsg_mark generator
	$generator $out $out $out >/tmp/generator.log 2>&1
	echo "generator: rc $?$(said)"
	echo "modprobe zram loaded the expected driver: $([ "$(drivers_loaded)" = "$1" ] && echo yes || echo "no, $(drivers_loaded)")"
	echo "devices: $(ls /sys/block | grep '^zram' | paste -sd' ')"
	echo "units: $(cd $out && find . -mindepth 1 | sort | paste -sd' ')"
	for unit in $(cd $out && find . -type f | sort); do
		echo "unit $unit: $(grep -v '^#' "$out/$unit" | grep -v '^$' | paste -sd'|')"
	done
	for dev in zram0 zram1; do
		service_command ExecStart $dev
		echo "$dev: algorithm $(selected $dev), recompression $(tr -d '\000' 2>/dev/null </sys/block/$dev/recomp_algorithm | paste -sd' ')"
		echo "$dev: disksize $(cat /sys/block/$dev/disksize), mem_limit $(field 4 /sys/block/$dev/mm_stat), backing_dev $(cat /sys/block/$dev/backing_dev), initstate $(cat /sys/block/$dev/initstate)"
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
	records 91 $((4 << 20)) >/tmp/generator.data
	cp /tmp/generator.data /mnt/zram1/data && sync && echo 3 >/proc/sys/vm/drop_caches
	echo "file on zram1 reads back: $(cmp -s /tmp/generator.data /mnt/zram1/data && echo yes || echo no)"
	if [ "${RECOMPRESS:-0}" = 1 ]; then
		# The pages written, idle now, recompressed with zram1's secondary algorithm, as the
		# configuration's global recompression parameters (which zram-generator only shows)
		# say; block_state marks them r.
		compr=$(field 2 /sys/block/zram1/mm_stat)
		echo all >/sys/block/zram1/idle
		echo "recompress type=idle: rc $(echo type=idle >/sys/block/zram1/recompress; echo $?)"
		echo "pages recompressed: $(awk '$3 ~ /r/' /sys/kernel/debug/zram/zram1/block_state | grep -q . && echo yes || echo no)"
		echo "zram1 stores less: $([ "$(field 2 /sys/block/zram1/mm_stat)" -lt "$compr" ] && echo yes || echo no)"
		echo 3 >/proc/sys/vm/drop_caches
		echo "file on zram1 reads back after recompression: $(cmp -s /tmp/generator.data /mnt/zram1/data && echo yes || echo no)"
	fi
	echo "zram0 mm_stat orig_data_size same_pages huge_pages: $(awk '{ print $1, $6, $8 }' /sys/block/zram0/mm_stat)"
	umount /mnt/zram1
	echo "mount unit stopped: rc $?"
	swapoff /dev/zram0
	echo "swap unit stopped: rc $?"
	for dev in zram0 zram1; do
		service_command ExecStop $dev
		echo "$dev: initstate $(cat /sys/block/$dev/initstate), disksize $(cat /sys/block/$dev/disksize), backing_dev $(cat /sys/block/$dev/backing_dev)"
	done
	modprobe -r zram
	echo "modprobe -r zram: rc $?, loaded $(drivers_loaded)"
	rm -f /tmp/generator.data
}

# both NAME LINES: the scenario with C zram.ko, then with zram_rs (through the package's modprobe
# configuration), compared; C's transcript and zram_rs's log printed.
both() {
	scenario zram >"/tmp/$1.c" 2>&1
	ln -s /usr/share/zram-rs-dkms/zram_rs-as-zram.conf /etc/modprobe.d/zram_rs-as-zram.conf
	scenario zram_rs >"/tmp/$1.rs" 2>&1
	rm /etc/modprobe.d/zram_rs-as-zram.conf
	while read -r line; do ktap_print_msg "$1, C: $line"; done <"/tmp/$1.c"
	while read -r line; do ktap_print_msg "$1, zram_rs log: $line"; done </tmp/generator.log
	compare_transcripts "/tmp/$1.c" "/tmp/$1.rs" "$2"
}

mkdir -p /etc/systemd
echo "$config_12" >/etc/systemd/zram-generator.conf
generator=/lib/systemd/system-generators/zram-generator
service=/lib/systemd/system/systemd-zram-setup@.service
both generator-12 $lines_12
check "Debian 12's generator made zram0 swap with the configured priority" grep -q '^swaps: /dev/zram0 partition [0-9]* 77$' /tmp/generator-12.rs
check "and zram1 an ext4 file system on /mnt/zram1" grep -q '^mounts: /dev/zram1 /mnt/zram1 ext4, discard 1$' /tmp/generator-12.rs

echo "$config_13" >/etc/systemd/zram-generator.conf
generator=/usr/lib/systemd/system-generators/zram-generator
service=/usr/lib/systemd/system/systemd-zram-setup@.service
RECOMPRESS=$MULTI_COMP both generator-13 $lines_13
if [ "$MULTI_COMP" = 1 ]; then
	check "Debian 13's generator set zstd as zram0's recompression algorithm" grep -q '^zram0: algorithm lzo-rle, recompression #1: .*\[zstd\]' /tmp/generator-13.rs
else
	ktap_test_skip "Debian 13's generator set zstd as zram0's recompression algorithm (no recompression in this kernel's zram)"
fi
# (zram-size and zram-resident-limit count MemTotal in whole MiB; mm_stat's mem_limit is in bytes)
check "and zram0's memory limit (mm_stat)" grep -q "^zram0: disksize [0-9]*, mem_limit $(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024 * 65536)), " /tmp/generator-13.rs
[ "$MULTI_COMP" = 1 ] || ktap_test_skip "zram_rs recompressed zram1's idle pages (no recompression in this kernel's zram)"
[ "$MULTI_COMP" = 0 ] || check "zram_rs recompressed zram1's idle pages, stores less and reads them back" bash -c "grep -qx 'pages recompressed: yes' /tmp/generator-13.rs && grep -qx 'zram1 stores less: yes' /tmp/generator-13.rs && grep -qx 'file on zram1 reads back after recompression: yes' /tmp/generator-13.rs"
rm /etc/systemd/zram-generator.conf

zram_load
zram_unload
finish
