#!/bin/bash
# The kernel's own zram selftests (tools/testing/selftests/zram from the kernel source this
# build uses), run against zram_rs. Only the module name is changed, on the fly; zram.sh exits 0
# even on failure, so its output is judged: both tests must print [PASS] and nothing FAIL. The
# selftest sets 'lzo' as written; on a kernel whose C zram has no lzo (Debian's) that setting
# fails for any zram, and that one FAIL line is expected.
. "$(dirname "$0")/lib.sh"
plan 6
c_algorithms
expected_fail='^$'
case " $ALGORITHMS " in
*" lzo "*) ;;
*) expected_fail="^FAIL can't set 'lzo' to /sys/block/zram0/comp_algorithm" ;;
esac
unexpected_fails() {
	grep FAIL /tmp/kselftest.out | grep -vE "$expected_fail"
}

work=/tmp/kselftest-zram
rm -rf $work
cp -r /usr/share/kselftest/zram $work
sed -i -e 's/modprobe zram /modprobe zram_rs /' -e 's/rmmod zram /rmmod zram_rs /' \
	-e "s/grep -q '^zram' \/proc\/modules/grep -q '^zram_rs ' \/proc\/modules/" $work/zram_lib.sh
check_eq "only the module name was changed (5 lines)" 5 "$(diff -u /usr/share/kselftest/zram/zram_lib.sh $work/zram_lib.sh | grep -c '^+[^+]')"
check "zram.ko is not loaded" sh -c "! grep -q '^zram ' /proc/modules"

(cd $work && bash ./zram.sh) >/tmp/kselftest.out 2>&1
sed 's/^/# /' /tmp/kselftest.out
check "zram01 (ext4 on zram, compression ratio) passes" grep -q 'zram01 : \[PASS\]' /tmp/kselftest.out
check "zram02 (swap on zram) passes" grep -q 'zram02 : \[PASS\]' /tmp/kselftest.out
fails=$(unexpected_fails)
[ -z "$fails" ] || ktap_print_msg "unexpected: $fails"
check_eq "no FAIL in the selftest output (but the expected one)" "" "$fails"
check "the selftests unloaded zram_rs" sh -c "! grep -q '^zram_rs ' /proc/modules"
rm -rf $work /tmp/kselftest.out
finish
