#!/bin/bash
# Races and faults: hot_add/hot_remove against readers, reset against opens, discard against
# reads and writes, compact and mem_used_max during I/O, mem_limit exhaustion while swapping.
# Each loop is bounded; what must hold is no oops, hang or leak (checked by the VM after the
# script) and no data lost. On the debug kernel, where each round is several times slower, the
# loops run a third as many rounds.
. "$(dirname "$0")/lib.sh"
plan $((16 + UNLOAD_CASES))

zram_load
z=$(sysblock 0)
dev=/dev/zram0
# rounds N: N, or a third of it on the debug kernel.
rounds() { echo $((DEBUG_KERNEL ? ($1 + 2) / 3 : $1)); }

# hot_add/hot_remove while other processes read every device's attributes.
(for _ in $(seq 1 "$(rounds 150)"); do cat /sys/block/zram*/mm_stat /sys/block/zram*/comp_algorithm >/dev/null 2>&1; done) &
reader=$!
ok=true
n=$(rounds 60)
for _ in $(seq 1 $n); do
	id=$(cat /sys/class/zram-control/hot_add) || ok=false
	echo 4M >/sys/block/zram$id/disksize || ok=false
	echo "$id" >/sys/class/zram-control/hot_remove || ok=false
done
wait $reader
check "$n hot_add/disksize/hot_remove rounds beside readers" $ok
check_eq "only zram0 is left" zram0 "$(ls /sys/block | grep zram)"

# reset against opens: each either wins or gets EBUSY, nothing else, and both happen. One
# process opens and closes the disk in a tight loop (a builtin, no fork), another reads it.
rm -f /tmp/stop-opener
(
	i=0
	while [ ! -e /tmp/stop-opener ] && [ $i -lt 1000000 ]; do
		: <$dev
		i=$((i + 1))
	done
) 2>/dev/null &
opener=$!
(for _ in $(seq 1 "$(rounds 100)"); do dd if=$dev of=/dev/null bs=4k count=1 2>/dev/null; done) &
reader=$!
ok=0 busy=0 other=0
for _ in $(seq 1 "$(rounds 100)"); do
	r=$(write_attr $z/reset 1)
	case $r in
	OK) ok=$((ok + 1)) ;;
	"Device or resource busy") busy=$((busy + 1)) ;;
	*) other=$((other + 1)) ;;
	esac
	echo 4M >$z/disksize 2>/dev/null
done
touch /tmp/stop-opener
wait $opener $reader
check_eq "reset against opens: only OK or EBUSY" 0 $other
check "reset against opens: both outcomes seen (OK $ok, EBUSY $busy)" test $ok -gt 0 -a $busy -gt 0

# discard against reads and writes of the same and other regions, then the data is checked:
# outside the discarded range intact; inside it every page either zero (discarded last) or the
# writer's page (written last), never anything else; no failed I/O.
echo 1 >$z/reset
echo 64M >$z/disksize
dd if=/dev/urandom of=/tmp/keep bs=1M count=8 2>/dev/null
dd if=/tmp/keep of=$dev bs=1M seek=32 oflag=direct 2>/dev/null
# The range the discards cover holds data first, so that reading zero there shows they worked.
dd if=/tmp/keep of=$dev bs=1M count=8 oflag=direct 2>/dev/null
dd if=/tmp/keep of=$dev bs=1M seek=8 count=8 oflag=direct 2>/dev/null
head -c 1M /dev/urandom >/tmp/race.written
(for _ in $(seq 1 "$(rounds 60)"); do blkdiscard -o 0 -l $((16 << 20)) $dev; done) &
discarder=$!
(for _ in $(seq 1 "$(rounds 60)"); do dd if=/tmp/race.written of=$dev bs=64k count=16 seek=4 oflag=direct 2>/dev/null; done) &
writer=$!
for _ in $(seq 1 "$(rounds 60)"); do dd if=$dev of=/dev/null bs=64k count=32 iflag=direct 2>/dev/null; done
wait $discarder $writer
check "data outside the discarded range survives" cmp -s /tmp/keep <(dd if=$dev bs=1M skip=32 count=8 iflag=direct 2>/dev/null)
# raced_pages: "ZERO WRITTEN OTHER" counts of the pages of the written region (256 KiB on).
raced_pages() {
	rm -rf /tmp/race.pages && mkdir /tmp/race.pages && cd /tmp/race.pages || return
	dd if=$dev of=got bs=64k count=16 skip=4 iflag=direct 2>/dev/null
	split -b "$PAGE" -a 4 got got.
	split -b "$PAGE" -a 4 /tmp/race.written written.
	paste <(sha256sum got.* | cut -c1-64) <(sha256sum written.* | cut -c1-64) |
		awk -v zero="$(head -c "$PAGE" /dev/zero | sha256sum | cut -c1-64)" '
			$1 == zero { z++; next } $1 == $2 { w++; next } { o++ }
			END { print z + 0, w + 0, o + 0 }'
	cd / && rm -rf /tmp/race.pages
}
read -r zero written other < <(raced_pages)
check_eq "the raced region: each page zero or the writer's ($zero zero, $written written)" 0 "$other"
check "the discarded region outside the writer's reads zero" \
	cmp -s <(dd if=$dev bs=64k count=4 iflag=direct 2>/dev/null) <(head -c 256k /dev/zero)
check_io_ok "$z" "discards racing reads and writes"

# compact and mem_used_max while fio writes and verifies.
(for _ in $(seq 1 80); do echo 1 >$z/compact; echo 0 >$z/mem_used_max; done) &
poker=$!
fio --name=busy --filename=$dev --direct=1 --rw=randwrite --bs=4k --size=16M --offset=0 \
	--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_fatal=1 \
	--numjobs=2 --offset_increment=16M --output=/tmp/fio.out >/dev/null 2>&1
rc=$?
wait $poker
check "fio verify while compact and mem_used_max are written" test $rc = 0
[ $rc = 0 ] || tail -15 /tmp/fio.out | sed 's/^/# /'

# mem_limit exhaustion while swapping: swap writes fail, what was stored stays intact.
echo 1 >$z/reset
echo 16M >$z/mem_limit
echo 256M >$z/disksize
mkswap $dev >/dev/null
swapon $dev
# The text is written under memory.high, which reclaims (swaps the tmpfs pages out to the disk)
# but never calls the OOM killer, so the data to check is whole whatever reclaim's pace; memfill
# then runs under memory.max, a little above.
cg=$(memory_cgroup zram_rs_limit memory.high 40M)
mkdir -p /mnt/limit
mount -t tmpfs -o size=200M tmpfs /mnt/limit
# When swap writes fail the cgroup runs out of memory and memfill is killed (or, if reclaim keeps
# retrying instead, stopped after 60 s): expected, and so are the kernel's "Write-error on
# swap-device" lines.
echo "zram_rs-test: expect oom begin" >/dev/kmsg
echo "zram_rs-test: expect io-error begin" >/dev/kmsg
bash -c "
	echo \$\$ > $cg/cgroup.procs
	yes 'text that compresses into the limit' | head -c \$((64 << 20)) | tee /mnt/limit/text |
		sha256sum | sed 's|-\$|/mnt/limit/text|' > /tmp/limit.sums
	cat $z/mm_stat > /tmp/limit.stored
	echo 48M > $cg/memory.max
	echo max > $cg/memory.high
	timeout 60 memfill 128 1 > /tmp/memfill.out 2>&1
	echo \$? > /tmp/memfill.rc
" 2>/dev/null
echo "zram_rs-test: expect io-error end" >/dev/kmsg
echo "zram_rs-test: expect oom end" >/dev/kmsg
ktap_print_msg "memfill under a 16 MiB limit: exit $(cat /tmp/memfill.rc 2>/dev/null || echo "none (its shell was killed)"); io_stat: $(cat $z/io_stat); mm_stat: $(cat $z/mm_stat)"
# The 64 MiB of text did not fit under memory.high: at least 24 MiB of it went to the disk
# before memfill (16 MiB checked).
check "the text was swapped out before memfill ($(field 1 /tmp/limit.stored) bytes stored)" \
	test "$(field 1 /tmp/limit.stored 2>/dev/null || echo 0)" -ge $((16 << 20))
check "the kernel saw failed swap writes" test "$(field 2 $z/io_stat)" -gt 0
check "memory stayed within the limit" test "$(field 3 $z/mm_stat)" -le $((16 << 20))
check "data swapped before the limit is intact" sha256sum -c --quiet /tmp/limit.sums
# memfill's end: every page it checked read back as written (exit 0), or it was stopped before
# the end, by the OOM killer (137, SIGKILL) or by the 60 s bound (busybox's timeout passes on
# the SIGTERM: 143) — never a page read back wrong (exit 1, "differs" in its output), nor any
# other end (a swap-in that failed is a SIGBUS, 135), nor none (the shell itself died: nothing
# was checked).
memfill_rc=$(cat /tmp/memfill.rc 2>/dev/null || echo none)
memfill_ended_well() {
	! grep -q differs /tmp/memfill.out || return 1
	case $memfill_rc in 0 | 124 | 137 | 143) return 0 ;; *) return 1 ;; esac
}
check "memfill under the limit read back no page wrong: it ended with 0 or was killed or stopped (exit $memfill_rc)" \
	memfill_ended_well
memfill_ended_well || sed 's/^/# /' /tmp/memfill.out | head -12
echo max >$cg/memory.max
echo 0 >$z/mem_limit
check "swapoff after exhaustion" swapoff $dev
check "data intact after swapoff" sha256sum -c --quiet /tmp/limit.sums
umount /mnt/limit
rmdir $cg

rm -f /tmp/keep /tmp/fio.out /tmp/stop-opener /tmp/limit.sums /tmp/limit.stored /tmp/memfill.out /tmp/memfill.rc
zram_unload
finish
