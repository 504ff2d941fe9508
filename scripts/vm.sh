#!/bin/bash
# usage: vm.sh run              boot the VM and run the demo (guest/demo.sh)
#        vm.sh bench            boot the VM and run the benchmark (guest/bench.sh; BENCH_REPS,
#                               BENCH_SIZE, BENCH_ONLY, BENCH_CLOCK, BENCH_PROFILE)
#        vm.sh test SCRIPT...   boot the VM, run kselftest-style scripts, report their TAP
# Builds the kernel (cached) and zram_rs.ko first. Environment: ARCH_NAME (x86_64 | arm64),
# KCONFIG_VARIANT, ACCEL (tcg by default: KVM does not work on the machines this was made on),
# MEM, SMP, VM_TIMEOUT (seconds for the whole boot), VM_QEMU_EXTRA (more QEMU arguments),
# VM_APPEND (more words for the guest kernel's command line, which scripts may read),
# ZRAM_RS_KO (a zram_rs.ko built elsewhere for the same kernel, e.g. of an older commit, to
# measure it instead of building the work tree's). Test mode ends with the line
# "vm: N passed, N failed, N skipped" and exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
mode=${1:?run or test}
shift
ACCEL=${ACCEL:-tcg}
SMP=${SMP:-2}
if [ "$mode" = run ]; then MEM=${MEM:-512M}; else MEM=${MEM:-1G}; fi
extra_append=
clock=()
if [ "$mode" = bench ]; then
	extra_append="zram_rs.reps=${BENCH_REPS:-5} zram_rs.size=${BENCH_SIZE:-32M} zram_rs.only=${BENCH_ONLY:-.} zram_rs.profile=${BENCH_PROFILE:-0}"
	# icount: the guest's clock advances by one nanosecond per guest instruction, so timings
	# count instructions instead of following the host's load (one host thread runs all vCPUs).
	[ "${BENCH_CLOCK:-wall}" != icount ] || clock=(-icount shift=0,sleep=off)
fi
# The debug kernel (KASAN, kmemleak scans) runs the suite several times slower: a longer limit
# for the whole boot, and for each script (the guest's default is 900 s; 99-faults alone has
# taken from 430 to 700 s there).
if [ -n "$KCONFIG_VARIANT" ] && [ "$KCONFIG_VARIANT" = debug ]; then
	VM_TIMEOUT=${VM_TIMEOUT:-5400}
	extra_append+=" zram_rs.timeout=1500"
fi
VM_TIMEOUT=${VM_TIMEOUT:-2400}
extra_append+=" ${VM_APPEND:-}"

kdir=$("$here/kernel.sh" | tail -n 1)
ko=${ZRAM_RS_KO:-$("$here/module.sh" | tail -n 1)}
echo "vm: kernel $kdir"
echo "vm: module $ko"
work=$ZRAM_RS_CACHE/vm/$(kernel_name)
mkdir -p "$work"
initrd=$work/initramfs.cpio.gz
log=$work/console-$mode.log
"$here/initramfs.sh" "$initrd" "$kdir" "$ko" "$@"

# A scratch virtio disk, /dev/vda in the guest: a backing device for the writeback tests and
# the demo. Sparse, recreated for every boot.
disk=$work/vda.img
rm -f "$disk"
truncate -s 256M "$disk"
# Two failing disks for the backing-device fault tests, through QEMU's blkdebug driver:
# /dev/vdb fails every write, /dev/vdc fails reads of blocks 1-64 (sectors 8 to 512; not
# sector 0, which the kernel's partition scan reads).
for d in vdb vdc; do
	rm -f "$work/$d.img"
	truncate -s 16M "$work/$d.img"
done
printf '[inject-error]\nevent = "write_aio"\niotype = "write"\nerrno = "5"\n' >"$work/vdb.blkdebug"
: >"$work/vdc.blkdebug"
for sector in $(seq 8 8 512); do
	printf '[inject-error]\nevent = "read_aio"\niotype = "read"\nerrno = "5"\nsector = "%d"\n' "$sector" >>"$work/vdc.blkdebug"
done
# A slow disk, /dev/vdd: writes throttled by QEMU to 400 KiB a second (100 pages of 4 KiB, however
# the guest merges them), so that a writeback to it runs for seconds (the tests of what waits
# for a writeback: reset, attribute writes, readers).
rm -f "$work/vdd.img"
truncate -s 64M "$work/vdd.img"
case $ARCH_NAME in
x86_64)
	qemu=(qemu-system-x86_64 -accel "$ACCEL")
	image=$kdir/arch/x86/boot/bzImage
	console=ttyS0
	virtio_blk=virtio-blk-pci
	;;
arm64)
	# A 16 KiB granule needs a CPU that has one; pauth-impdef keeps pointer authentication cheap
	# under TCG.
	cpu=cortex-a57
	[ "$KCONFIG_VARIANT" != 16k ] || cpu=max,pauth-impdef=on
	qemu=(qemu-system-aarch64 -M virt -cpu "$cpu" -accel "$ACCEL")
	image=$kdir/arch/arm64/boot/Image
	console=ttyAMA0
	virtio_blk=virtio-blk-device
	;;
esac
# The disks, each with its guest name as its serial (the guest's init checks that each
# /dev/vdX got its own). On arm64's virt board the last virtio-mmio device on the command line
# is found first, so the order is reversed there.
disks=()
for d in vda vdb vdc vdd; do
	throttle=
	case $d in
	vda) file=$disk ;;
	vdd) file=$work/vdd.img throttle=,throttling.bps-write=409600 ;;
	*) file=blkdebug:$work/$d.blkdebug:$work/$d.img ;;
	esac
	one=(-drive "file=$file,if=none,id=$d,format=raw,cache=unsafe$throttle" -device "$virtio_blk,drive=$d,serial=$d")
	if [ "$ARCH_NAME" = arm64 ]; then disks=("${one[@]}" "${disks[@]}"); else disks+=("${one[@]}"); fi
done
echo "vm: booting $ARCH_NAME under QEMU ($ACCEL$([ "$ACCEL" = tcg ] && echo ': software emulation, timings are TCG')${clock:+, clock from instruction counts}, $SMP CPUs, $MEM)"
start=$(date +%s)
set +e
# shellcheck disable=SC2206 # (VM_QEMU_EXTRA is split into words on purpose)
extra_qemu=(${VM_QEMU_EXTRA:-})
timeout "$VM_TIMEOUT" "${qemu[@]}" "${clock[@]}" "${extra_qemu[@]}" -m "$MEM" -smp "$SMP" -nographic -no-reboot -net none \
	"${disks[@]}" \
	-kernel "$image" -initrd "$initrd" \
	-append "console=$console panic=-1 loglevel=3 log_buf_len=16M zram_rs.mode=$mode $extra_append" \
	</dev/null 2>&1 | sed -u 's/\r$//' | tee "$log" | grep --line-buffered -v '^VM-DMESG' | \
	if [ "$mode" != test ]; then
		# (bench: the lines for the report stay in the log)
		awk '/VM: up/ { shown = 1; sub(/.*VM: up/, "VM: up") } shown && !/reboot: Restarting/ && !/^(RESULT|PROFILE|INSN|KSYM) / { print; fflush() }'
	else
		grep --line-buffered -E '^(VM: |ok |not ok |# |Bail out)'
	fi
qemu_rc=${PIPESTATUS[0]}
set -e
echo "vm: QEMU exited rc=$qemu_rc after $(($(date +%s) - start)) s (log: $log)"

if ! grep -q '^VM: ALL_DONE' "$log"; then
	echo "vm: the VM did not finish (crash, panic or timeout); last console lines:"
	tail -n 40 "$log" | sed 's/^/    /'
fi
if grep -q '^VM: KERNEL_PROBLEM' "$log"; then
	echo "vm: kernel problems reported:"
	grep '^VM-DMESG' "$log" | head -60 | sed 's/^/    /'
fi

if [ "$mode" != test ]; then
	grep -q '^VM: DEMO_EXIT rc=0' "$log" && grep -q '^VM: ALL_DONE' "$log" &&
		! grep -q '^VM: KERNEL_PROBLEM' "$log"
	exit
fi

# Tally: every TAP result line, plus one failure for each script that exited non-zero without
# reporting a failed case, reported kernel problems, or never finished.
awk -v all_done="$(grep -c '^VM: ALL_DONE' "$log")" '
	/^VM: TEST / { current = $3; seen[current] = 1; failed_here = 0; next }
	/^ok [0-9]+/ { if ($0 ~ /# SKIP/) skipped++; else passed++; next }
	/^not ok [0-9]+/ { failed++; failed_here++; next }
	/^VM: EXIT / {
		split($4, rc, "=");
		if (rc[2] != 0 && failed_here == 0) { failed++; print "vm: " $3 " exited with " rc[2] " without a failed case" }
		done[$3] = 1; next
	}
	/^VM: KERNEL_PROBLEM / { failed++; print "vm: kernel problem during " $3; next }
	END {
		for (t in seen) if (!(t in done)) { failed++; print "vm: " t " did not finish" }
		if (all_done == 0) { failed++; print "vm: the VM did not finish" }
		printf "vm: %d passed, %d failed, %d skipped\n", passed, failed, skipped
		exit failed > 0
	}
' "$log" || rc=$?
exit "${rc:-0}"
