#!/bin/bash
# Debian's zram-tools (zramswap, unchanged) against C zram and zram_rs in this boot, with its
# /etc/default/zramswap settings: `zramswap start` (modprobe zram, through the package's modprobe
# configuration for zram_rs; algorithm, size as a percentage of the RAM, mkswap, swapon with the
# priority), `zramswap status` (zramctl's table) and `zramswap stop` (swapoff, modprobe -r zram).
# The two transcripts must match line for line. x86_64 guests only (scripts/clients.sh).
. "$(dirname "$0")/lib.sh"
# The clients are fetched for x86_64 guests only.
if [ ! -x /usr/sbin/zramswap ]; then
	plan 1
	ktap_test_skip "zramswap is not in this guest (x86_64 only: scripts/clients.sh)"
	finish
	exit 0
fi
lines=14
plan $((lines + 2 + 2 + UNLOAD_CASES))

cat >/etc/default/zramswap <<'CONF'
ALGO=zstd
PERCENT=10
PRIORITY=55
CONF
# zramswap's size, rounded up to a page by the driver (as C zram does).
expected_size=$(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) * 1024 * 10 / 100))
expected_size=$(((expected_size + PAGE - 1) / PAGE * PAGE))


# memory_pressure: memfill (40 MiB of every kind of page, read back and checked) in a cgroup whose
# memory.high is 16 MiB, so that most of it goes through the swap zramswap set up.
memory_pressure() {
	local cg rc before
	cg=$(memory_cgroup zramswap memory.high 16M)
	before=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
	bash -c "echo \$\$ >$cg/cgroup.procs && exec memfill 40" >/dev/null 2>&1
	rc=$?
	rmdir "$cg"
	echo "memfill rc $rc, pages swapped out $([ "$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)" -gt "$before" ] && echo yes || echo no)"
}

# stored_bytes: what zram0 stores, in bytes, counted from its data rather than from the
# driver's statistics: its pages that are not all zeros (tools/pagescan.c; swap writes no
# zero-filled page, and a freed or never written slot reads as zeros).
stored_bytes() {
	local pages nonzero
	read -r pages nonzero < <(pagescan /dev/zram0)
	echo $((nonzero * PAGE))
}

# status_sizes_match LINE STORED...: yes when the DATA column of zramswap's status line
# (zramctl's size, in its units with one decimal) is one of the STORED figures (stored_bytes,
# counted just before and just after the status: pages reclaimed from the swap cache in between
# may leave the device), at least the swap header's page, and its COMPR and TOTAL columns are
# positive and ordered as a driver's must be (COMPR at most DATA — swap's pages here are
# a quarter incompressible, stored whole — and TOTAL at least COMPR); else what differs.
status_sizes_match() {
	local line=$1 stored verdicts
	shift
	verdicts=$(for stored in "$@"; do
		echo "$line" | awk -v stored="$stored" -v page="$PAGE" '
			# (busybox awk has no exponentiation)
			function bytes(s,   i, u) {
				i = index("BKMGT", substr(s, length(s)))
				if (i == 0) return -1
				for (u = 1; i > 1; i--) u *= 1024
				return (s + 0) * u
			}
			function unit(s,   i, u) {
				i = index("BKMGT", substr(s, length(s)))
				for (u = 1; i > 1; i--) u *= 1024
				return u
			}
			{
				data = bytes($4); compr = bytes($5); total = bytes($6)
				if (stored >= page && data - stored <= unit($4) / 10 && stored - data <= unit($4) / 10 &&
				    compr > 0 && compr <= data + unit($4) / 10 && total >= compr - unit($6) / 10)
					print "yes"
				else
					print "no: " $4 " " $5 " " $6 ", the device holding " stored " bytes"
			}'
	done)
	grep -qx yes <<<"$verdicts" && echo yes || tail -n 1 <<<"$verdicts"
}

# scenario MODULE: the transcript; MODULE is the driver `modprobe zram` should load.
scenario() {
	local out before
	# (mkswap's random UUID left out)
	out=$(zramswap start 2>&1)
	echo "start: rc $?, said $(echo "$out" | sed 's/UUID=[0-9a-f-]*/UUID=.../' | paste -sd'|')"
	echo "modprobe zram loaded the expected driver: $([ "$(drivers_loaded)" = "$1" ] && echo yes || echo "no, $(drivers_loaded)")"
	echo "algorithm: $(sed 's/.*\[\([^]]*\)\].*/\1/' /sys/block/zram0/comp_algorithm)"
	echo "disksize: $(cat /sys/block/zram0/disksize)"
	echo "swaps: $(awk '$1 == "/dev/zram0" { print $1, $2, $3, $5 }' /proc/swaps)"
	# Some of the swap used: a process that touches more than a memory limit allows.
	echo "swapped: $(memory_pressure)"
	before=$(stored_bytes)
	out=$(zramswap status 2>&1)
	echo "status: rc $?, $(echo "$out" | wc -l) lines"
	echo "status header: $(echo "$out" | head -n 1 | tr -s ' ')"
	echo "status device: $(echo "$out" | sed -n 2p | awk '{ print $1, $2, $3, $7, $8 }')"
	echo "status sizes are what the device stores: $(status_sizes_match "$(echo "$out" | sed -n 2p)" "$before" "$(stored_bytes)")"
	out=$(zramswap stop 2>&1)
	echo "stop: rc $?, said $(echo "$out" | paste -sd'|')"
	echo "after stop: swaps $(grep -c '^/dev/zram0 ' /proc/swaps), loaded $(drivers_loaded)"
	out=$(zramswap status 2>&1)
	echo "status after stop: rc $?, said $(echo "$out" | paste -sd'|')"
	out=$(zramswap stop 2>&1)
	echo "stop again: rc $?, said $(echo "$out" | paste -sd'|')"
}

scenario zram >/tmp/zramswap.c 2>&1
ln -s /usr/share/zram-rs-dkms/zram_rs-as-zram.conf /etc/modprobe.d/zram_rs-as-zram.conf
scenario zram_rs >/tmp/zramswap.rs 2>&1
rm /etc/modprobe.d/zram_rs-as-zram.conf
while read -r line; do ktap_print_msg "C: $line"; done </tmp/zramswap.c
compare_transcripts /tmp/zramswap.c /tmp/zramswap.rs $lines
check_eq "zramswap made zram0 swap of 10% of the RAM with zstd" "disksize: $expected_size" "$(grep '^disksize: ' /tmp/zramswap.rs)"
check "with priority 55" grep -q '^swaps: /dev/zram0 partition [0-9]* 55$' /tmp/zramswap.rs

zram_load
zram_unload
finish
