#!/bin/bash
# The README's install sequence after its `reboot` (the lines in /tests/debian-after-reboot,
# taken from README.md when the guest is packed: Debian 13's, or Debian unstable's on its
# kernel): each succeeds as written, and what they make is what they promise — zramctl lists
# /dev/zram0 of 1 GiB, served by zram_rs, not zram.ko. On Debian's own kernels (make check
# KERNEL=debian-7.3 or debian-unstable) this ends the sequence that scripts/debian-kernel.sh
# began in a root of the suite; the same lines hold on every kernel.
. "$(dirname "$0")/lib.sh"
mapfile -t lines </tests/debian-after-reboot
plan $((${#lines[@]} + 4 + UNLOAD_CASES))
check "the README's sequence has lines after its reboot (${#lines[@]})" test ${#lines[@]} -gt 0
for line in "${lines[@]}"; do
	if out=$(sh -c "$line" 2>&1); then
		ktap_test_pass "README: $line"
	else
		ktap_print_msg "$out"
		ktap_test_fail "README: $line"
	fi
	last=$out
done
ktap_print_msg "zramctl:"
echo "${last:-}" | sed 's/^/# /'
check_eq "the last line, zramctl, lists /dev/zram0 with 1 GiB" "/dev/zram0 1G" \
	"$(echo "${last:-}" | awk 'NR > 1 && $1 == "/dev/zram0" { print $1, $3 }')"
check_eq "zram0 is 1 GiB" $((1 << 30)) "$(cat /sys/block/zram0/disksize)"
check_eq "served by zram_rs" zram_rs "$(drivers_loaded)"
zram_unload
finish
