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

# status_sizes_match LINE MM_STAT: yes when the DATA, COMPR and TOTAL columns of zramswap's
# status line (zramctl's sizes, in its units with one decimal) are mm_stat's orig_data_size,
# compr_data_size and mem_used_total, as read just before the status (MM_STAT) or now (pages
# reclaimed from the swap cache in between may leave the device), and orig_data_size is within
# what the swap holds: mkswap's header page and at most the swap area's used pages
# (/proc/swaps; the kernel keeps zero-filled pages of used slots in memory, not on the
# device), so that pages freed from swap must have left the device; else what differs.
status_sizes_match() {
	local -a mm
	local used reading verdict=
	for reading in "$(cat /sys/block/zram0/mm_stat)" "$2"; do
		read -r -a mm <<<"$reading"
		used=$(awk '$1 == "/dev/zram0" { print $4 }' /proc/swaps)
		if [ "${mm[0]}" -lt "$PAGE" ] || [ "${mm[0]}" -gt $((used * 1024 + PAGE)) ]; then
			verdict="no: orig_data_size ${mm[0]}, swap used $used KiB and a header page"
			continue
		fi
		verdict=$(echo "$1" | awk -v data="${mm[0]}" -v compr="${mm[1]}" -v total="${mm[2]}" '
			# (busybox awk has no exponentiation)
			function unit(s,   i, u) {
				i = index("BKMGT", substr(s, length(s)))
				if (i == 0) return -1
				for (u = 1; i > 1; i--) u *= 1024
				return u
			}
			function near(s, want,   u, got) {
				u = unit(s); got = (s + 0) * u
				return u > 0 && got - want <= u / 10 && want - got <= u / 10
			}
			{
				if (near($4, data) && near($5, compr) && near($6, total)) print "yes"
				else print "no: " $4 " " $5 " " $6 " against mm_stat " data " " compr " " total
			}')
		[ "$verdict" != yes ] || break
	done
	echo "$verdict"
}

# scenario MODULE: the transcript; MODULE is the driver `modprobe zram` should load.
scenario() {
	local out mm
	# (mkswap's random UUID left out)
	out=$(zramswap start 2>&1)
	echo "start: rc $?, said $(echo "$out" | sed 's/UUID=[0-9a-f-]*/UUID=.../' | paste -sd'|')"
	echo "modprobe zram loaded the expected driver: $([ "$(drivers_loaded)" = "$1" ] && echo yes || echo "no, $(drivers_loaded)")"
	echo "algorithm: $(sed 's/.*\[\([^]]*\)\].*/\1/' /sys/block/zram0/comp_algorithm)"
	echo "disksize: $(cat /sys/block/zram0/disksize)"
	echo "swaps: $(awk '$1 == "/dev/zram0" { print $1, $2, $3, $5 }' /proc/swaps)"
	# Some of the swap used: a process that touches more than a memory limit allows.
	echo "swapped: $(memory_pressure)"
	mm=$(cat /sys/block/zram0/mm_stat)
	out=$(zramswap status 2>&1)
	echo "status: rc $?, $(echo "$out" | wc -l) lines"
	echo "status header: $(echo "$out" | head -n 1 | tr -s ' ')"
	echo "status device: $(echo "$out" | sed -n 2p | awk '{ print $1, $2, $3, $7, $8 }')"
	echo "status sizes are the driver's: $(status_sizes_match "$(echo "$out" | sed -n 2p)" "$mm")"
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
