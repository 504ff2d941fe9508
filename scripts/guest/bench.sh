#!/bin/bash
# The benchmark `make bench` boots: for every cell, C zram.ko and zram_rs.ko take turns
# (load, configure, prefill, measure, reset, unload) REPS times, so that the machine's noise hits
# both alike. Prints machine-readable lines for the host to tabulate:
#   RESULT <cell> <driver> <rep> <fio terse v3 line>
#   SEED <driver> <rep> <seconds>      (dd of 100 MB of same-filled data, page cache)
#   MEMORY <driver> <rep> <mem_used_total>
#   WRITEBACK <driver> <rep> <pages/s written back> <pages/s read back>
#   WRITEBACK_COMPRESSED <driver> <rep> <pages/s written back> <pages/s read back>   (7.x)
#   RECOMPRESS <driver> <rep> <pages/s recompressed> <compr_data_size before> <after>
#   DICT <driver> <rep> <pages/s written> <pages/s read> <compr_data_size>
#   CORPUS <driver> <algorithm> <none|dict|dict,level=8> <kind> <pages> <orig_data_size>
#          <compr_data_size> <same_pages> <huge_pages> <intact|differs|write-failed>
#                                      (the kind's mm_stat deltas; kinds: programs text anon)
#   CORPUS_MEMORY <driver> <algorithm> <variant> <mem_used_total after the three kinds>
#   CORPUS_REFUSED <driver> <algorithm> <variant>   (algorithm_params refused the variant)
#   UNITS <driver> <algorithm> <unit> <kind> <pages> <compr_data_size> <intact|differs>
#                                      (the units cell: the kind's compr_data_size delta)
#   UNITS_MEMORY <driver> <algorithm> <unit> <mem_used_total after the three kinds>
#   UNITS_SWAP <driver> <algorithm> <mTHP bytes> <kind> <pages> <kB swapped out>
#          <compr_data_size while swapped out> <unit objects> <unit decompressions>
#          <units' page reads> <intact|differs|failed>   (units-swap cell: objects while swapped
#                                                         out, the reads' counts after read-back)
#   TABLE <driver> <bytes of the slot table> <pages>   (from /proc/vmallocinfo)
#   STOSQ <GB/s>
#   PROFILE <cell> <driver> <percent> <kernel symbol>   (BENCH_PROFILE=1: one perf run per cell)
#   LATENCY <cell> <driver> <rep> <reads> <p50> <p99> <p99.9> <p99.99> <writers' KiB/s> <waited>
#                                      (the readers' completion latency percentiles in ns of
#                                       the guest's clock; reads completed; zram_rs's read_stat,
#                                       the reads that waited for a decompression context, or -)
#   INSN <phase> <cell> <driver> <pages>   (BENCH_PROFILE=insn: the counting plugin's phase that
#                                           holds one run of the cell, and the pages it moved)
#   STATS <cell> <driver> <rep> <reads> <p50> <p99> <p99.9> <max> <walks>   (mm_stat reads
#                                      beside a walk over every slot: ns of the guest's clock)
#   KSYM <address> <type> <symbol> [<module>]   (BENCH_PROFILE=insn: the module's symbols)
set -u
reps=${BENCH_REPS:-5}
size=${BENCH_SIZE:-32M}
only=${BENCH_ONLY:-.}
drivers="zram zram_rs"
# The driver that goes first changes with every repetition, so that what one run leaves behind
# (freed pages on per-CPU lists, warmed caches) favours neither driver in the medians.
order() { # REP
	if [ $(($1 % 2)) = 1 ]; then echo zram zram_rs; else echo zram_rs zram; fi
}
z=/sys/block/zram0
dev=/dev/zram0

setup() { # DRIVER ALGORITHM
	modprobe "$1" num_devices=1 || exit 1
	echo "$2" >$z/comp_algorithm
	echo 1G >$z/disksize
}
teardown() { # DRIVER
	echo 1 >$z/reset
	rmmod "$1"
}

# bytes SIZE: fio's size with a K, M or G suffix, in bytes.
bytes() {
	case $1 in
	*K) echo $((${1%K} << 10)) ;;
	*M) echo $((${1%M} << 20)) ;;
	*G) echo $((${1%G} << 30)) ;;
	*) echo "$1" ;;
	esac
}
insn_phase=0
# counted NAME DRIVER PAGES COMMAND...: COMMAND (its output discarded) as one phase of the QEMU
# plugin's count (BENCH_PROFILE=insn), PAGES the 4 KiB pages it moves. Each sync(2) closes a
# phase; nothing else in the guest calls sync, so COMMAND runs as phase number insn_phase. The
# module's symbols come first, for the report.
counted() {
	local name=$1 driver=$2 pages=$3
	shift 3
	grep "\[$driver\]\$" /proc/kallsyms | sed 's/^/KSYM /'
	sync
	insn_phase=$((insn_phase + 1))
	"$@" >/dev/null 2>&1
	sync
	echo "INSN $insn_phase $name $driver $pages"
	insn_phase=$((insn_phase + 1))
}
# write_attr FILE VALUE (for counted).
write_attr() { echo "$2" >"$1"; }

# measure NAME DRIVER ALGORITHM RW BS FIO_OPTIONS...: one fio run on a fresh device (prefilled
# for reads); prints fio's terse line. With BENCH_PROFILE=1 the run is sampled by perf and the
# top kernel symbols are printed as PROFILE lines instead.
measure() {
	local name=$1 driver=$2 algorithm=$3 rw=$4 bs=$5
	shift 5
	setup "$driver" "$algorithm"
	case $rw in
	read | randread)
		fio --name=prefill --rw=write --bs=1M "$@" >/dev/null 2>&1
		;;
	esac
	if [ "${BENCH_PROFILE:-0}" = insn ]; then
		counted "$name" "$driver" $(($(bytes "$size") * jobs / 4096)) \
			fio --name="$name" --rw="$rw" --bs="$bs" "$@"
	elif [ "${BENCH_PROFILE:-0}" = 1 ]; then
		# Long enough (guest seconds, repeating the I/O) for thousands of samples.
		perf record -q -o /tmp/perf.data -e cpu-clock -F 10000 -a -- \
			fio --name="$name" --rw="$rw" --bs="$bs" --time_based --runtime=3 "$@" >/dev/null 2>&1
		perf report -q -i /tmp/perf.data --stdio --sort sym 2>/dev/null |
			awk -v cell="$name" -v driver="$driver" '$2 == "[k]" && $3 != "pv_native_safe_halt" && n < 30 { n++; print "PROFILE", cell, driver, $1, $3 }'
		rm -f /tmp/perf.data
	else
		fio --name="$name" --rw="$rw" --bs="$bs" "$@" 2>/dev/null | tail -n 1
	fi
	teardown "$driver"
}

# run_cell NAME ALGORITHM RW BS NUMJOBS BUFFER_OPTIONS...
run_cell() {
	local name=$1 algorithm=$2 rw=$3 bs=$4 jobs=$5
	shift 5
	echo "$name" | grep -Eq "$only" || return 0
	local common=(--filename=$dev --direct=1 --ioengine=psync --size=$size --numjobs=$jobs
		--offset_increment=$size --group_reporting --output-format=terse --terse-version=3 "$@")
	if [ "${BENCH_PROFILE:-0}" = insn ]; then
		# Instruction counts do not vary between repetitions: one run per driver.
		for driver in $drivers; do
			measure "$name" $driver $algorithm $rw $bs "${common[@]}"
		done
		return 0
	fi
	for rep in $(seq 1 "$reps"); do
		for driver in $(order "$rep"); do
			echo "RESULT $name $driver $rep $(BENCH_PROFILE=0 measure "$name" $driver $algorithm $rw $bs "${common[@]}")"
		done
	done
	if [ "${BENCH_PROFILE:-0}" = 1 ]; then
		for driver in $drivers; do
			measure "$name" $driver $algorithm $rw $bs "${common[@]}"
		done
	fi
}

echo "BENCH: reps=$reps size=$size only=$only cpus=$(nproc) $(uname -r) $(uname -m)"
buffers=(
	"zero lz4 --zero_buffers"
	"same lz4 --buffer_pattern=0x0df0fecaefbeadde"
	"compressible-lz4 lz4 --buffer_compress_percentage=60 --refill_buffers"
	"compressible-zstd zstd --buffer_compress_percentage=60 --refill_buffers"
	"random lz4 --refill_buffers"
)
for buffer in "${buffers[@]}"; do
	read -r kind algorithm options <<<"$buffer"
	for jobs in 1 2; do
		run_cell "$kind/seqwrite/j$jobs" $algorithm write 1M $jobs $options
		run_cell "$kind/seqread/j$jobs" $algorithm read 1M $jobs $options
		run_cell "$kind/randwrite/j$jobs" $algorithm randwrite 4k $jobs $options
		run_cell "$kind/randread/j$jobs" $algorithm randread 4k $jobs $options
	done
done

# The 2017 memset_l measurement: 100 MB of non-zero same-filled data, read with dd.
# (Neither runs when counting instructions: the counts cover the fio cells and, below, the
# recompression and the dictionary's writes and reads, once per driver.)
counting=$([ "${BENCH_PROFILE:-0}" = insn ] && echo yes)
timed_reps=$reps
[ -z "$counting" ] || timed_reps=1
[ -z "$counting" ] && echo seed | grep -Eq "$only" && for rep in $(seq 1 "$reps"); do
	for driver in $(order "$rep"); do
		setup $driver lzo-rle
		fio --name=seed --filename=$dev --rw=write --bs=1M --size=100M --direct=1 \
			--buffer_pattern=0x0df0fecaefbeadde >/dev/null 2>&1
		echo 3 >/proc/sys/vm/drop_caches
		TIMEFORMAT=%3R
		seconds=$( { time dd if=$dev of=/dev/null count=$((100 * 1024 * 1024 / 512)) 2>/dev/null; } 2>&1)
		echo "SEED $driver $rep $seconds"
		teardown $driver
	done
done

# Memory: the same compressible data set with each driver.
[ -z "$counting" ] && echo memory | grep -Eq "$only" && for rep in $(seq 1 "$reps"); do
	for driver in $(order "$rep"); do
		setup $driver lz4
		fio --name=memory --filename=$dev --rw=write --bs=1M --size=256M --direct=1 \
			--buffer_compress_percentage=60 --refill_buffers --randseed=$rep >/dev/null 2>&1
		echo "MEMORY $driver $rep $(awk '{ print $3 }' $z/mm_stat)"
		teardown $driver
	done
done

# Writeback: 64 MiB on a 1 GiB device backed by the VM's virtio disk, written back, then read
# back with direct I/O: pages per second of each, by the guest's clock. Two cells: random data
# (stored huge) and `writeback huge`; and, where the kernel's zram has `compressed_writeback`
# (7.x), half-compressible data written back compressed after `idle all`.
wb_size_mb=64
# Microseconds of the guest's clock (bash's EPOCHREALTIME; busybox's date has no %N).
now_us() { echo "${EPOCHREALTIME/./}"; }
# The kernel's page size (busybox has no getconf).
page=$(awk '/^KernelPageSize:/ { print $2 * 1024; exit }' /proc/self/smaps)
# wb_cell TAG KIND: KIND is huge or compressed.
wb_cell() {
	local tag=$1 kind=$2 rep driver pages start written read data=(--refill_buffers) mode=huge
	[ "$kind" = huge ] || { data+=(--buffer_compress_percentage=50); mode=idle; }
	for rep in $(seq 1 "$reps"); do
		for driver in $(order "$rep"); do
			modprobe "$driver" num_devices=1 || exit 1
			if [ "$kind" = compressed ]; then
				[ -e $z/compressed_writeback ] || { teardown $driver; return; }
				echo 1 >$z/compressed_writeback
			fi
			echo /dev/vda >$z/backing_dev
			echo 1G >$z/disksize
			fio --name=wb --filename=$dev --rw=write --bs=1M --size=${wb_size_mb}M --direct=1 \
				"${data[@]}" --randseed=$rep >/dev/null 2>&1
			echo all >$z/idle
			pages=$((wb_size_mb * 1024 * 1024 / page))
			start=$(now_us)
			echo $mode >$z/writeback
			written=$(now_us)
			dd if=$dev of=/dev/null bs=1M count=$wb_size_mb iflag=direct 2>/dev/null
			read=$(now_us)
			echo "$tag $driver $rep $((pages * 1000000 / (written - start))) $((pages * 1000000 / (read - written)))"
			teardown $driver
		done
	done
}
[ -z "$counting" ] && echo writeback | grep -Eq "$only" && [ -b /dev/vda ] && wb_cell WRITEBACK huge
[ -z "$counting" ] && echo writeback_compressed | grep -Eq "$only" && [ -b /dev/vda ] &&
	wb_cell WRITEBACK_COMPRESSED compressed

# Recompression: 64 MiB of half-compressible data stored with lzo, then `idle all` and
# `recompress type=idle` with zstd as the recompression algorithm: pages per second of the
# recompression (by the guest's clock) and compr_data_size before and after, which the same
# libraries make equal for both drivers. Counting instructions, the recompression is counted.
echo recompress | grep -Eq "$only" && for rep in $(seq 1 "$timed_reps"); do
	for driver in $(order "$rep"); do
		modprobe "$driver" num_devices=1 || exit 1
		[ -e $z/recomp_algorithm ] || { rmmod "$driver"; break 2; }
		echo lzo >$z/comp_algorithm
		echo algo=zstd >$z/recomp_algorithm
		echo 1G >$z/disksize
		fio --name=recompress --filename=$dev --rw=write --bs=1M --size=${wb_size_mb}M \
			--direct=1 --buffer_compress_percentage=50 --refill_buffers --randseed=$rep \
			>/dev/null 2>&1
		echo all >$z/idle
		before=$(awk '{ print $2 }' $z/mm_stat)
		pages=$((wb_size_mb * 1024 * 1024 / page))
		if [ -n "$counting" ]; then
			counted recompress/idle "$driver" $((wb_size_mb * 256)) write_attr $z/recompress type=idle
			teardown "$driver"
			continue
		fi
		start=$(now_us)
		echo type=idle >$z/recompress
		done_at=$(now_us)
		elapsed=$((done_at > start ? done_at - start : 1))
		echo "RECOMPRESS $driver $rep $((pages * 1000000 / elapsed)) $before $(awk '{ print $2 }' $z/mm_stat)"
		teardown $driver
	done
done

# Dictionaries: 32 MiB of text records written with zstd and a 64 KiB dictionary of other
# records of the same kinds (as tests/72-dictionaries.sh makes them), then read back: pages per
# second of each (by the guest's clock) and compr_data_size, which the same library and
# dictionary make equal for both drivers.
# shellcheck source=scripts/guest/records.sh
. /guest/records.sh
if echo dict | grep -Eq "$only"; then
	dict_mb=32
	records 1 $((dict_mb << 20)) >/tmp/bench.text
	records 2 65536 >/tmp/bench.dict
	for rep in $(seq 1 "$timed_reps"); do
		for driver in $(order "$rep"); do
			modprobe "$driver" num_devices=1 || exit 1
			echo zstd >$z/comp_algorithm
			echo "algo=zstd dict=/tmp/bench.dict" >$z/algorithm_params 2>/dev/null ||
				{ rmmod "$driver"; break 2; }
			echo 1G >$z/disksize
			pages=$((dict_mb * 1024 * 1024 / page))
			if [ -n "$counting" ]; then
				counted dict/write "$driver" $((dict_mb * 256)) \
					dd if=/tmp/bench.text of=$dev bs=1M oflag=direct
				counted dict/read "$driver" $((dict_mb * 256)) \
					dd if=$dev of=/dev/null bs=1M count=$dict_mb iflag=direct
				teardown "$driver"
				continue
			fi
			start=$(now_us)
			dd if=/tmp/bench.text of=$dev bs=1M oflag=direct 2>/dev/null
			written=$(now_us)
			dd if=$dev of=/dev/null bs=1M count=$dict_mb iflag=direct 2>/dev/null
			read_at=$(now_us)
			w=$((written > start ? written - start : 1))
			r=$((read_at > written ? read_at - written : 1))
			echo "DICT $driver $rep $((pages * 1000000 / w)) $((pages * 1000000 / r)) $(awk '{ print $2 }' $z/mm_stat)"
			teardown $driver
		done
	done
	rm -f /tmp/bench.text /tmp/bench.dict
fi

# Compression ratios on a realistic corpus (scripts/corpus.py, carried in /corpus): the guest's
# programs and libraries, Debian's documentation text and a process's anonymous memory, written
# one kind after another to one device with every algorithm the kernel's C zram offers, and with
# a dictionary trained on other data of the same kinds for those that take one (plus zstd at
# level 8 with it, as the dictionary patches measured); then read back and compared. Sizes
# depend on no clock: one run per driver. Per kind the mm_stat deltas, then mem_used_total.
if [ -z "$counting" ] && echo corpus | grep -Eq "$only" && [ -d /corpus ]; then
	modprobe zram num_devices=1 || exit 1
	variants=()
	for algorithm in $(tr -d '[]' <$z/comp_algorithm); do
		variants+=("$algorithm none -")
		case $algorithm in
		zstd | lz4 | lz4hc) variants+=("$algorithm dict dict=/corpus/dict") ;;
		esac
	done
	rmmod zram
	variants+=("zstd dict,level=8 level=8 dict=/corpus/dict")
	for variant in "${variants[@]}"; do
		read -r algorithm label params <<<"$variant"
		for driver in $(order 1); do
			modprobe "$driver" num_devices=1 || exit 1
			echo "$algorithm" >$z/comp_algorithm
			if [ "$params" != - ] && ! echo "algo=$algorithm $params" >$z/algorithm_params; then
				echo "CORPUS_REFUSED $driver $algorithm $label"
				rmmod "$driver"
				continue
			fi
			echo 1G >$z/disksize
			offset=0
			before=(0 0 0 0 0 0 0 0 0)
			for kind in programs text anon; do
				image=/corpus/$kind.img
				pages=$(($(wc -c <$image) / page))
				verdict=intact
				dd if=$image of=$dev bs="$page" seek=$offset oflag=direct 2>/dev/null || verdict=write-failed
				read -r -a mm <$z/mm_stat
				dd if=$dev bs="$page" skip=$offset count=$pages iflag=direct 2>/dev/null |
					cmp -s - $image || verdict=differs
				echo "CORPUS $driver $algorithm $label $kind $pages $((mm[0] - before[0])) $((mm[1] - before[1])) $((mm[5] - before[5])) $((mm[7] - before[7])) $verdict"
				before=("${mm[@]}")
				offset=$((offset + pages))
			done
			echo "CORPUS_MEMORY $driver $algorithm $label ${mm[2]}"
			teardown "$driver"
		done
	done
fi

# Compression units (compress_unit, a zram_rs extension): the corpus's kinds in runs of 64 KiB
# (/corpus-units), each written in 64 KiB direct writes to a device of one-page units (C zram
# and zram_rs) and to zram_rs devices of 16 and 64 KiB units, with lz4 and zstd; read back in 64
# KiB reads and compared, then one page of every 64 KiB read alone (fio, direct, a hole after
# each page). Sizes depend on no clock: one run per configuration. With BENCH_PROFILE=insn the
# writes, the reads and the pages read alone are counted: cells
# units/<algorithm>/<kind>/<write|read|page>/u<unit> (C zram's under the page size). Where the
# guest has its virtio disk as a backing device, everything is then written back (`idle all`,
# `writeback idle`: a unit split page by page, each page decompressed from its unit): cells
# units/<algorithm>/all/writeback/u<unit>, per 4 KiB page of the three kinds.
if echo units | grep -Eq "$only" && [ -d /corpus-units ]; then
	for algorithm in lz4 zstd; do
		for config in "zram $page" "zram_rs $page" "zram_rs 16384" "zram_rs 65536"; do
			read -r driver unit <<<"$config"
			[ "$unit" -ge "$page" ] || continue
			modprobe "$driver" num_devices=1 || exit 1
			echo "$algorithm" >$z/comp_algorithm
			[ "$driver" = zram ] || echo "$unit" >$z/compress_unit
			backing=
			[ -b /dev/vda ] && [ -e $z/backing_dev ] && echo /dev/vda >$z/backing_dev && backing=1
			echo 1G >$z/disksize
			at=0
			all_pages=0
			before=(0 0 0 0 0 0 0 0 0)
			for kind in programs text anon; do
				image=/corpus-units/$kind.img
				bytes=$(wc -c <$image)
				runs=$((bytes / 65536))
				pages=$((bytes / 4096))
				cell=units/$algorithm/$kind
				# units_step STEP PAGES COMMAND...: counted under BENCH_PROFILE=insn.
				units_step() {
					if [ -n "$counting" ]; then
						counted "$cell/$1/u$unit" "$driver" "$2" "${@:3}"
					else
						"${@:3}" >/dev/null 2>&1
					fi
				}
				units_step write $pages dd if=$image of=$dev bs=64K seek=$at oflag=direct
				read -r -a mm <$z/mm_stat
				verdict=intact
				dd if=$dev bs=64K skip=$at count=$runs iflag=direct 2>/dev/null | cmp -s - $image ||
					verdict=differs
				units_step read $pages dd if=$dev of=/dev/null bs=64K skip=$at count=$runs iflag=direct
				units_step page $((runs * page / 4096)) fio --name=page --filename=$dev \
					--rw=read:$((65536 - page)) --bs=$page --offset=$((at * 65536)) --size=$bytes \
					--direct=1 --ioengine=psync
				echo "UNITS $driver $algorithm $unit $kind $((bytes / page)) $((mm[1] - before[1])) $verdict"
				before=("${mm[@]}")
				at=$((at + runs))
				all_pages=$((all_pages + pages))
			done
			echo "UNITS_MEMORY $driver $algorithm $unit ${mm[2]}"
			if [ -n "$backing" ]; then
				cell=units/$algorithm/all
				echo all >$z/idle
				units_step writeback $all_pages write_attr $z/writeback idle
				echo "UNITS_WRITEBACK $driver $algorithm $unit $(awk '{ print $1 }' $z/bd_stat) $(awk '{ print $7 }' $z/unit_stat 2>/dev/null)"
			fi
			teardown "$driver"
		done
	done
fi

# Swap of large folios (units-swap): each kind of the corpus copied into anonymous memory by a
# process of a memory cgroup, with multi-size THP of M (16 and 64 KiB, above the page size)
# enabled, swapped out by the cgroup's memory.reclaim and read back (tools/swapfill.c), to C
# zram and to a zram_rs device of M-sized units, with lz4 and zstd. Sizes while swapped out
# (mm_stat's compr_data_size); after the read-back unit_stat's decompressions, page reads,
# partial reads (pages read by a request that covered part of their unit: a folio split, or
# swapped in page by page) and units decompressed straight into a folio's pages. With BENCH_PROFILE=insn
# the swap-out and the swap-in are counted: cells units-swap/<algorithm>/<kind>/<out|in>/m<M>.
if echo units-swap | grep -Eq "$only" && [ -d /corpus-units ]; then
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	cg=/sys/fs/cgroup/bench-swap
	for mthp in 16384 65536; do
		thp=/sys/kernel/mm/transparent_hugepage/hugepages-$((mthp / 1024))kB/enabled
		{ [ "$mthp" -gt "$page" ] && [ -w "$thp" ]; } || continue
		thp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp")
		echo always >"$thp"
		for algorithm in lz4 zstd; do
			for driver in zram zram_rs; do
				for kind in programs text anon; do
					modprobe "$driver" num_devices=1 || exit 1
					echo "$algorithm" >$z/comp_algorithm
					[ "$driver" = zram ] || echo "$mthp" >$z/compress_unit
					echo 256M >$z/disksize
					mkswap $dev >/dev/null && swapon $dev || exit 1
					mkdir -p $cg
					image=/corpus-units/$kind.img
					pages=$(($(wc -c <$image) / 4096))
					read -r -a before <$z/mm_stat
					[ -z "$counting" ] || grep "\[$driver\]\$" /proc/kallsyms | sed 's/^/KSYM /'
					# swapfill's three syncs: the swap-out is the next phase, the swap-in the one after.
					out=$(bash -c "echo \$\$ >$cg/cgroup.procs; exec swapfill $image $cg/memory.reclaim $z/mm_stat $z/unit_stat" 2>/dev/null)
					if [ -n "$counting" ]; then
						# Each INSN line takes the KSYM lines before it (insn_report.py).
						echo "INSN $((insn_phase + 1)) units-swap/$algorithm/$kind/out/m$mthp $driver $pages"
						grep "\[$driver\]\$" /proc/kallsyms | sed 's/^/KSYM /'
						echo "INSN $((insn_phase + 2)) units-swap/$algorithm/$kind/in/m$mthp $driver $pages"
					fi
					insn_phase=$((insn_phase + 3))
					read -r -a mm <<<"$(echo "$out" | sed -n "s|^$z/mm_stat ||p")"
					swapped=$(echo "$out" | sed -n 's/^swapped //p')
					verdict=$(echo "$out" | grep -xE 'intact|differs' || echo failed)
					units="0 0 0 0 0"
					[ "$driver" = zram ] || units="$(echo "$out" | sed -n "s|^$z/unit_stat ||p" | awk '{ print $1 }') $(awk '{ print $3, $4, $6, $8 }' $z/unit_stat)"
					echo "UNITS_SWAP $driver $algorithm $mthp $kind $pages ${swapped:-0} $((${mm[1]:-0} - before[1])) $units $verdict"
					swapoff $dev
					rmdir $cg
					teardown "$driver"
				done
			done
		done
		echo "$thp_was" >"$thp"
	done
fi

# Reads beside compression: writers compress 4 KiB random writes (60 % compressible) past
# 64 MiB of prefilled pages while readers read those pages 4 KiB at random, direct I/O, for
# BENCH_LATENCY_SECONDS (20) of the guest's clock: the readers' completion latency percentiles
# (ns of the guest's clock, guest instructions under BENCH_CLOCK=icount) and the writers'
# throughput. Cells latency/<algorithm>/w<writers>r<readers>: a writer per vCPU and a reader per
# two (two writers and one reader on the default two vCPUs; four and two with SMP=4 on a kernel
# built for four CPUs or more: the test kernels have CONFIG_NR_CPUS=2).
latency_seconds=${BENCH_LATENCY_SECONDS:-20}
# latency_json: the readers' reads and percentiles and the writers' KiB/s from fio's JSON.
latency_json() {
	awk '
		/"jobname" :/ { job = $3; gsub(/[",]/, "", job); section = "" }
		/"read" : \{/ { section = "read" }
		/"write" : \{/ { section = "write" }
		job == "writers" && section == "write" && /"bw" :/ && bw == "" { bw = $3; sub(/,/, "", bw) }
		job == "readers" && section == "read" && /"total_ios" :/ && reads == "" { reads = $3; sub(/,/, "", reads) }
		job == "readers" && section == "read" && /"percentile" : \{/ && !seen { inside = 1; seen = 1; next }
		inside && /\}/ { inside = 0 }
		inside { key = $1; value = $3; gsub(/[",]/, "", key); sub(/,/, "", value); p[key + 0] = value }
		END { print reads + 0, p[50] + 0, p[99] + 0, p[99.9] + 0, p[99.99] + 0, bw + 0 }'
}
# latency_cell ALGORITHM PARAMS WRITERS READERS (PARAMS: algorithm_params, or -)
latency_cell() {
	local algorithm=$1 params=$2 writers=$3 readers=$4 rep driver name
	name=latency/$algorithm${params#level=}/w${writers}r${readers}
	[ "$params" != - ] || name=latency/$algorithm/w${writers}r${readers}
	echo "$name" | grep -Eq "$only" || return 0
	for rep in $(seq 1 "$timed_reps"); do
		for driver in $(order "$rep"); do
			modprobe "$driver" num_devices=1 || exit 1
			echo "$algorithm" >$z/comp_algorithm
			[ "$params" = - ] || echo "algo=$algorithm $params" >$z/algorithm_params
			echo 1G >$z/disksize
			fio --name=prefill --filename=$dev --rw=write --bs=1M --size=64M --direct=1 \
				--buffer_compress_percentage=60 --refill_buffers --randseed=$rep >/dev/null 2>&1
			echo "LATENCY $name $driver $rep $(fio --filename=$dev --direct=1 --ioengine=psync \
				--bs=4k --time_based --runtime="$latency_seconds" --group_reporting \
				--percentile_list=50:99:99.9:99.99 --output-format=json --randseed=$rep \
				--name=writers --rw=randwrite --numjobs="$writers" --offset=64M --size=512M \
				--buffer_compress_percentage=60 --refill_buffers \
				--name=readers --new_group --rw=randread --numjobs="$readers" --offset=0 \
				--size=64M 2>/dev/null | latency_json) $(cat $z/read_stat 2>/dev/null || echo -)"
			teardown "$driver"
		done
	done
}
if [ -z "$counting" ]; then
	for algorithm in "zstd level=12" "lz4 -"; do
		latency_cell $algorithm "$(nproc)" $(($(nproc) > 1 ? $(nproc) / 2 : 1))
	done
fi

# Statistics readers beside walks over every slot: a reader reads mm_stat whole (open, read,
# close) again and again for stats_seconds while a walker repeats one walk of a 1 GiB device
# holding 256 MiB of data: none, idle marking (idle=all), compaction (compact), or a read of
# debugfs block_state. Per driver and walk: the reads' latency percentiles in ns of the guest's
# clock (statread) and the walks completed meanwhile.
#   STATS <cell> <driver> <rep> <reads> <p50> <p99> <p99.9> <max> <walks>
stats_seconds=${BENCH_STATS_SECONDS:-5}
stats_walk() { # WALK: one walk
	case $1 in
	none) sleep 1 ;;
	idle) echo all >$z/idle ;;
	compact) echo 1 >$z/compact ;;
	block_state) cat /sys/kernel/debug/zram/zram0/block_state >/dev/null ;;
	esac
}
stats_cell() { # WALK
	local walk=$1 name=stats/$1 rep driver walker
	echo "$name" | grep -Eq "$only" || return 0
	for rep in $(seq 1 "$timed_reps"); do
		for driver in $(order "$rep"); do
			setup "$driver" lzo-rle
			fio --name=prefill --filename=$dev --rw=write --bs=1M --size=256M --direct=1 \
				--buffer_compress_percentage=60 --refill_buffers --randseed=$rep >/dev/null 2>&1
			rm -f /tmp/stats.walks
			(
				trap 'echo $walks >/tmp/stats.walks; exit 0' TERM
				walks=0
				while :; do
					stats_walk "$walk"
					walks=$((walks + 1))
				done
			) &
			walker=$!
			echo "STATS $name $driver $rep $(statread $z/mm_stat "$stats_seconds")" >/tmp/stats.line
			kill -TERM $walker
			wait $walker
			echo "$(cat /tmp/stats.line) $(cat /tmp/stats.walks 2>/dev/null || echo -)"
			teardown "$driver"
		done
	done
}
if [ -z "$counting" ]; then
	for walk in none idle compact block_state; do
		stats_cell $walk
	done
fi

# The slot table's size per page: the largest vmalloc area that initialising a 1 GiB device
# adds (the table; /proc/vmallocinfo counts a guard page in each area).
[ -z "$counting" ] && echo table | grep -Eq "$only" && for driver in $drivers; do
	modprobe "$driver" num_devices=1 || exit 1
	awk '{ print $1 }' /proc/vmallocinfo >/tmp/vmalloc.before
	echo 1G >$z/disksize
	bytes=$(awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { print $2 }' \
		/tmp/vmalloc.before /proc/vmallocinfo | sort -n | tail -n 1)
	echo "TABLE $driver $((${bytes:-$page} - page)) $((1024 * 1024 * 1024 / page))"
	teardown $driver
done

[ -x /usr/local/bin/stosq ] && echo "STOSQ $(stosq 2 | awk '{ print $2 }')"
echo "BENCH: done"
