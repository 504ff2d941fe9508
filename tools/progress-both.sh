#!/bin/bash
# An experiment, run in the VM like a test script: under 99-progress's pressure (four fio
# writers on ext4 over a zstd device, memfill past RAM swapping to a file there, a direct-I/O
# reader), is a memfill run OOM-killed with C zram.ko as with zram_rs? Usage (on the host):
#   make vmtest KERNEL=debian-7.3 KCONFIG=rt VM_TIMEOUT=6000 VM_APPEND="zram_rs.timeout=5600" \
#       TESTS="tools/progress-both.sh tests/99-progress.sh"
# (tests/99-progress.sh must be in the guest; the runner then also runs it once more on its
# own, with zram_rs.) ROUNDS rounds (zram_rs.rounds=, default 5), each running the script with
# C zram.ko (PROGRESS_DRIVER=zram) and with zram_rs, in turns (C first in odd rounds). Each run
# is bounded alike: the writers run zram_rs.run= seconds (default 20), each memfill run goes
# zram_rs.over= MiB past RAM (default 128), and a run not ended after zram_rs.limit= seconds
# (default 900) is killed and counted as such. Per run it prints memfill's exit statuses, the OOM killer's kills of memfill from the kernel log, and
# the script's failed cases; one case per run checks that no data was lost (no page read back
# wrong by memfill, fio's verifying writers or the reader, the reader's file intact): an OOM
# kill is a result of the experiment, printed, not a failure. zram_rs.drivers= names the
# drivers (default zram,zram_rs; one of them alone where the other's runs stop the guest).
. "$(dirname "$0")/lib.sh"

rounds=5 run=20 over=128 limit=900 drivers=zram,zram_rs
for arg in $(cat /proc/cmdline); do
	case $arg in
	zram_rs.drivers=*) drivers=${arg#*=} ;;
	zram_rs.rounds=*) rounds=${arg#*=} ;;
	zram_rs.run=*) run=${arg#*=} ;;
	zram_rs.over=*) over=${arg#*=} ;;
	zram_rs.limit=*) limit=${arg#*=} ;;
	esac
done
[ -e /tests/99-progress.sh ] || {
	plan 1
	ktap_test_fail "tests/99-progress.sh is in the guest (name it in TESTS too)"
	finish
	exit 0
}
plan $((rounds * $(echo "${drivers//,/ }" | wc -w)))
ktap_print_msg "kernel $(uname -r), RAM $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB, $rounds rounds"
for round in $(seq 1 "$rounds"); do
	order=${drivers//,/ }
	# (two drivers take turns in going first)
	[ $((round % 2)) = 1 ] || order=$(echo "$order" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
	for driver in $order; do
		before=$(dmesg | grep -c 'Killed process [0-9]* (memfill)')
		start=$SECONDS
		PROGRESS_DRIVER=$driver PROGRESS_RUN=$run PROGRESS_OVER=$over timeout -s KILL "$limit" \
			bash /tests/99-progress.sh >/tmp/both.out 2>&1
		ended=$?
		if [ $ended = 137 ]; then
			# Not ended within the bound: what it started is stopped, its device let go.
			echo "(not ended within $limit s)" >>/tmp/both.out
			pkill -KILL memfill; pkill -KILL fio; pkill -KILL dd; sleep 5
			swapoff -a; umount /mnt/progress; rmmod "$driver"
		fi
		kills=$(($(dmesg | grep -c 'Killed process [0-9]* (memfill)') - before))
		rcs=$(sed -n 's/.*memfill runs under the writers verified every page (\(.*\))$/\1/p' /tmp/both.out | tr -s ' ')
		failed=$(grep '^not ok' /tmp/both.out | grep -v 'memfill runs under the writers' | sed 's/^not ok [0-9]* //' | paste -sd ';')
		ktap_print_msg "round $round, $driver: $((SECONDS - start)) s$([ $ended != 137 ] || echo ", not ended within $limit s"); memfill exits: ${rcs:-none}; OOM kills of memfill: $kills; failed cases: ${failed:-none}"
		grep -q 'fio: 4 writers' /tmp/both.out || sed 's/^/#   /' /tmp/both.out | tail -20
		# Lost data: memfill's exit 1 (a page read back wrong), or a failed case about data.
		check "round $round, $driver: no data lost (memfill's pages, fio's verified writes, the reader's reads and file)" \
			eval '! grep -qw 1 <<<"$rcs" && ! grep -qE "read back|reader|intact" <<<"$failed" && grep -q "fio: 4 writers" /tmp/both.out'
	done
done
finish
