#!/bin/bash
# An experiment, run on the host: the workload of tests/96-stress.sh (fio phases on a 512 MiB
# disk, then memfill past RAM on a 2 GiB swap) run through C zram.ko and through zram_rs.ko,
# twice each, taking turns, in two boots: zram_rs first, then C first. Prints, per boot, the
# order, each script's exit and the scripts during which the guest's log check found a kernel
# report, the VM's verdict, and every allocation failure report of the boot's console log (the
# task, the mask, the swap-table frame; the kernel rate-limits these reports, so they count
# failures from below). 96's bracket that allows kswapd's failed swap-table allocation is taken
# out of these copies, so that report counts here. The copies' zram_rs-only checks (same_stat)
# fail under C zram: the scripts' own results are not what this measures.
# Usage: tools/stress-both-drivers.sh [make variables, e.g. KERNEL=debian-7.3 KCONFIG=rt]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for driver in zram zram_rs; do
	for i in 1 2; do
		awk -v driver="$driver" '
			/expect swap-table-failure/ { next }
			{ print }
			/^\. .*lib\.sh"$/ {
				print "zram_load() { modprobe " driver " \"$@\"; }"
				print "zram_unload() { swapoff /dev/zram0 2>/dev/null; check \"rmmod " driver "\" rmmod " driver "; ktap_test_skip \"no kmemleak check in this copy\"; }"
			}' "$top/tests/96-stress.sh" >"$dir/96-$driver-$i.sh"
		if ! grep -q "^zram_load() { modprobe $driver " "$dir/96-$driver-$i.sh" ||
			grep -q 'expect swap-table-failure' "$dir/96-$driver-$i.sh"; then
			echo "stress-both-drivers: tests/96-stress.sh no longer has the lines this edits" >&2
			exit 1
		fi
	done
done
# The console log of the boot (scripts/vm.sh), for the kernel named as make names it.
for arg in "$@"; do
	case $arg in
	KERNEL=*) export KERNEL_SERIES=${arg#*=} ;;
	KCONFIG=*) export KCONFIG_VARIANT=${arg#*=} ;;
	ARCH=*) export ARCH_NAME=${arg#*=} ;;
	esac
done
. "$top/scripts/env.sh"
console=$ZRAM_RS_CACHE/vm/$(kernel_name)/console-test.log
for order in "zram_rs zram" "zram zram_rs"; do
	read -r a b <<<"$order"
	scripts="$dir/96-$a-1.sh $dir/96-$b-1.sh $dir/96-$a-2.sh $dir/96-$b-2.sh"
	echo "== $a first: $(basename -a $scripts | paste -sd' ')"
	rm -f "$console"
	make -s -C "$top" vmtest "$@" TESTS="$scripts" >"$dir/log" 2>&1 || true
	grep -E '^VM: (EXIT|KERNEL_PROBLEM)|^vm: ' "$dir/log" || true
	grep -E 'page allocation failure|Comm:|[^?] swap_cluster_alloc_table\+' "$console" 2>/dev/null |
		sed 's/^ *//' || echo "(no allocation failure report in $console)"
done
