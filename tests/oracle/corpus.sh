#!/bin/bash
# The differential corpus: drives one zram driver (ZRAM_MODULE=zram or zram_rs) through every
# attribute's reads and a corpus of bad and good writes in each device state, and prints one
# transcript line per step: "<case> -> <result> | <state afterwards>". Run it against C zram and
# zram_rs in the same boot and compare the transcripts (tests/95-oracle.sh). Each device state
# the writes start from is checked on entry and reported in "state: ... -> yes" lines (NO when
# it was not reached), and the last section checks that reset zeroes the disk's I/O statistics.
#
# Cases listed in tests/oracle/differences-SERIES (6.12, 7.2 or 7.3, the kernel running; 7.3's
# for later kernels) are not run against C zram: they make C zram log a kernel warning or are
# not built yet (see that file).
set -u
module=${ZRAM_MODULE:?zram or zram_rs}
here=$(cd "$(dirname "$0")" && pwd)
case $(uname -r | cut -d. -f1,2) in
6.*) differences=$here/differences-6.12 ;;
7.2) differences=$here/differences-7.2 ;;
*) differences=$here/differences-7.3 ;;
esac
z=/sys/block/zram0
dev=/dev/zram0

# Each step runs hundreds of times: only shell builtins here (a fork costs ~25 ms under TCG).
errfile=/tmp/corpus.err
# write_result FILE VALUE: one write(2); sets $result to OK or the error text.
write_result() {
	if { printf '%s' "$2" >"$1"; } 2>"$errfile"; then
		result=OK
	else
		read -r result <"$errfile"
		result=${result##*write error: }
		result=${result##*: }
	fi
}

result_of_read() {
	local out
	if out=$(cat "$1" 2>&1); then
		printf '%s' "$out" | tr '\n' '|'
	else
		echo "ERR ${out##*: }"
	fi
}

# Sets $state to what the device looks like now.
read_state() {
	local init size alg mm
	read -r init <$z/initstate
	read -r size <$z/disksize
	read -r alg <$z/comp_algorithm
	read -r -a mm <$z/mm_stat
	state="init=$init size=$size alg=$alg limit=${mm[3]}"
}

# Sets $init to the device's initstate.
read_init() {
	read -r init <$z/initstate
}

# state_line DESCRIPTION COMMAND...: one line saying whether the device is in the state now.
state_line() {
	local description=$1
	shift
	if "$@"; then
		echo "state: $description -> yes"
	else
		echo "state: $description -> NO"
	fi
}
is_open() {
	read_init
	[ "$init" = 1 ] && [ /proc/self/fd/3 -ef $dev ]
}
is_mounted() {
	grep -q "^$dev /mnt/oracle ext4 " /proc/mounts
}

declare -A not_on_c=()
while IFS=$'\t' read -r key _; do
	not_on_c[$key]=1
done <"$differences"

# The attributes a write sets that the state does not show: read back after every write to
# them, so that a write answered as C's but stored otherwise is seen.
declare -A read_back=([writeback_limit]=1 [writeback_limit_enable]=1 [recomp_algorithm]=1
	[max_comp_streams]=1)

# record CASE ATTR VALUE: one write and what it did.
record() {
	local quoted key back=
	printf -v quoted '%q' "$3"
	key="$1 $2 $quoted"
	if [ "$module" = zram ] && [ -n "${not_on_c[$key]:-}" ]; then
		echo "$key -> (not run on C zram) | -"
		return
	fi
	write_result "$z/$2" "$3"
	read_state
	if [ -n "${read_back[$2]:-}" ]; then
		local -a value
		if mapfile -t value 2>/dev/null <"$z/$2"; then
			# (C 7.3's recomp_algorithm has NUL bytes after its text, a deliberate
			# difference: an empty last element here, left out.)
			if [ ${#value[@]} -gt 0 ] && [ -z "${value[-1]}" ]; then unset 'value[-1]'; fi
			local IFS='|'
			back=" $2=${value[*]}"
		else
			back=" $2=unreadable"
		fi
	fi
	echo "$key -> $result | $state$back"
}

attributes="disksize initstate reset compact mem_limit mem_used_max idle max_comp_streams comp_algorithm io_stat mm_stat debug_stat algorithm_params backing_dev writeback writeback_limit writeback_limit_enable bd_stat recomp_algorithm recompress"
writable="disksize reset compact mem_limit mem_used_max idle max_comp_streams comp_algorithm algorithm_params backing_dev writeback writeback_limit writeback_limit_enable recomp_algorithm recompress"
# 7.x's writeback attributes (C 6.12 has neither; zram_rs has writeback_batch_size there too,
# checked against C 7.3's answers in 87-writeback).
if [ "$(uname -r | cut -d. -f1)" -ge 7 ]; then
	attributes+=" writeback_batch_size compressed_writeback"
	writable+=" writeback_batch_size compressed_writeback"
fi
long=$(head -c 200 /dev/zero | tr '\0' x)
values=($'\n' " " "garbage" "-1" "0" "1" "+1" $'1\n' $'1\n\n' "1 " "2" "65535" "65536" \
	"4096" "4097" "64M" "1K" "0x10" "010" "18446744073709551616" "18446744073709551615" "1E" \
	"99999999999999999999999" "lz4" $'lz4\n' "LZ4" "lzo" "zstd" "all" $'all\n' "alls" \
	"level=1" "level" "level=" "level=x" "algo=zstd" "algo=lzo-rle level=2" "priority=1" \
	"priority=-1" "dict=/nonexistent" '"level=3"' "algo=lz4hc priority=3" "priority=4" \
	"type=huge_idle max_pages=1 threshold=100" "type=foo" "threshold=4095" "$long")

modprobe "$module" num_devices=1 || { echo "cannot load $module"; exit 1; }
echo "load: devices=$(ls -d /sys/block/zram* | wc -l) control=$(ls /sys/class/zram-control | tr '\n' ' ')"
for a in $attributes; do
	echo "mode $a -> $(stat -c %a $z/$a 2>&1)"
done
echo "hot_add mode -> $(stat -c %a /sys/class/zram-control/hot_add) hot_remove mode -> $(stat -c %a /sys/class/zram-control/hot_remove)"

# Reads in each state.
read_init
state_line "uninitialised for the reads" test "$init" = 0
for a in $attributes; do echo "uninit read $a -> $(result_of_read $z/$a)"; done
echo 64M >$z/disksize
read_init
state_line "initialised for the reads" test "$init" = 1
for a in $attributes; do
	case $a in mm_stat | debug_stat) continue ;; esac # sizes depend on the allocator's page use
	echo "init read $a -> $(result_of_read $z/$a)"
done
echo 1 >$z/reset

# Writes in each state, each from a fresh device in that state.
not_uninit=0 not_init=0
for a in $writable; do
	for v in "${values[@]}"; do
		echo 1 >$z/reset
		read_init
		[ "$init" = 0 ] || not_uninit=$((not_uninit + 1))
		record uninit "$a" "$v"
	done
	for v in "${values[@]}"; do
		echo 1 >$z/reset
		echo 64M >$z/disksize
		read_init
		[ "$init" = 1 ] || not_init=$((not_init + 1))
		record init "$a" "$v"
	done
done
state_line "uninitialised before each uninit write" test $not_uninit = 0
state_line "initialised before each init write" test $not_init = 0
echo 1 >$z/reset
echo 64M >$z/disksize
exec 3<$dev
state_line "open and initialised for the open writes" is_open
for a in $writable; do
	for v in "${values[@]}"; do record open "$a" "$v"; done
done
state_line "still open after the open writes" is_open
exec 3<&-
echo 1 >$z/reset
echo 64M >$z/disksize
mkfs.ext4 -q $dev && mkdir -p /mnt/oracle && mount $dev /mnt/oracle
state_line "mounted for the mounted writes" is_mounted
for a in $writable; do
	for v in "${values[@]}"; do record mounted "$a" "$v"; done
done
state_line "still mounted after the mounted writes" is_mounted
umount /mnt/oracle
echo 1 >$z/reset

# A backend that cannot start (deflate's level 42): C zram forgets the algorithm and its
# parameters with it (zram_destroy_comps), so the next disksize starts from the default.
echo deflate >$z/comp_algorithm
echo level=42 >$z/algorithm_params
write_result $z/disksize 16M
read_state
echo "failed init: disksize 16M -> $result | $state"
write_result $z/disksize 16M
read_state
echo "after failed init: disksize 16M -> $result | $state"
echo 1 >$z/reset

# Reset zeroes the disk's I/O statistics (C zram: part_stat_set_all in zram_reset_device).
echo 64M >$z/disksize
dd if=/dev/zero of=$dev bs=4k count=16 oflag=direct 2>/dev/null
dd if=$dev of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null
read -r -a io <$z/stat
state_line "I/O counted in stat before the reset" test "${io[0]}" -gt 0 -a "${io[4]}" -gt 0
echo 1 >$z/reset
echo "reset stat -> $(result_of_read $z/stat)"

# The control class.
echo "hot_add -> $(cat /sys/class/zram-control/hot_add)"
for v in $'\n' "-1" "garbage" "7" "2147483648" "1x" "+1"; do
	write_result /sys/class/zram-control/hot_remove "$v"
	echo "hot_remove $(printf '%q' "$v") -> $result | $(ls -d /sys/block/zram* | tr '\n' ' ')"
	[ -e /sys/block/zram1 ] || cat /sys/class/zram-control/hot_add >/dev/null
done
exec 3</dev/zram1
write_result /sys/class/zram-control/hot_remove 1
echo "hot_remove busy -> $result"
exec 3<&-
write_result /sys/class/zram-control/hot_remove 1
echo "hot_remove idle -> $result"
echo "read hot_remove -> $(result_of_read /sys/class/zram-control/hot_remove)"
rmmod "$module"
echo "unload: $(ls /sys/class | grep -c zram-control) $(ls /sys/block | grep -c zram)"
