#!/bin/bash
# Compression dictionaries (algorithm_params dict=PATH) with C zram in the same boot as the
# oracle: one scenario runs against C zram.ko and then zram_rs.ko and prints one line per step
# (what a write answered, the mm_stat sizes, whether the disk reads back as written). The
# transcripts must match line for line: the same library, level and dictionary give the same
# compressed sizes. Steps: zstd, lz4 and lz4hc each without a dictionary, with one of two pages
# and a bit (larger than a page) and with one of 80 KiB (more than the 64 KiB lz4 keeps: C 6.12's
# lz4 and lz4hc writes then fail, 7.3's lz4 refuses the disksize); an empty dictionary file, a
# missing one and a directory; a dictionary for lzo (ignored by 6.12, EOPNOTSUPP at disksize on
# 7.3); a recompression algorithm with a dictionary; and on 7.3 deflate's window
# (deflate.winbits: in range, out of range, not a number). Every page written is read back.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
LINES=$((71 + 20 * ABI_7_3))
plan $((LINES + 2 + 1 + 1 + UNLOAD_CASES))

pages=64
pattern=/tmp/dict.pattern
# Text pages of records such as a program keeps in memory, and dictionaries of other records of
# the same kinds (the guest's /guest/records.sh, shared with the bench).
# shellcheck source=scripts/guest/records.sh
. /guest/records.sh
records 1 $((pages * PAGE)) >$pattern
records 2 $((2 * PAGE + 100)) >/tmp/dict.small
records 3 $((80 << 10)) >/tmp/dict.large
: >/tmp/dict.empty

# scenario MODULE: the steps, one line each.
scenario() {
	local m=$1 z=/sys/block/zram0 dev=/dev/zram0 written params
	modprobe "$m" num_devices=1 || return
	line() { echo "$1 -> $2"; }
	# orig_data_size compr_data_size same_pages huge_pages
	mm() {
		read -r -a mm <$z/mm_stat
		echo "${mm[0]} ${mm[1]} ${mm[5]} ${mm[7]}"
	}
	write_pages() {
		if dd if=$pattern of=$dev bs="$PAGE" count=$pages oflag=direct 2>/dev/null; then
			echo ok
		else
			echo failed
		fi
	}
	# Whether the disk reads back as written (n/a when the write failed).
	same_data() {
		if [ "$written" != ok ]; then
			echo n/a
		else
			reads_as $dev $pages $pattern
		fi
	}
	for algo in zstd lz4 lz4hc; do
		for dict in none small large; do
			params="algo=$algo"
			[ $dict = none ] || params="$params dict=/tmp/dict.$dict"
			line "$algo $dict: comp_algorithm" "$(write_attr $z/comp_algorithm $algo)"
			line "$algo $dict: algorithm_params" "$(write_attr $z/algorithm_params "$params")"
			line "$algo $dict: disksize" "$(write_attr $z/disksize $((pages * PAGE)))"
			# lz4 and lz4hc fail every write with an 80 KiB dictionary, logging "Compression
			# failed" (as C): expected there.
			[ "$algo $dict" = "zstd large" ] || [ $dict != large ] ||
				echo "zram_rs-test: expect io-error begin" >/dev/kmsg
			written=$(write_pages)
			[ "$algo $dict" = "zstd large" ] || [ $dict != large ] ||
				echo "zram_rs-test: expect io-error end" >/dev/kmsg
			line "$algo $dict: write" "$written"
			line "$algo $dict: mm" "$(mm)"
			line "$algo $dict: data" "$(same_data)"
			echo 1 >$z/reset
		done
	done
	line "empty dictionary" "$(write_attr $z/algorithm_params 'algo=zstd dict=/tmp/dict.empty')"
	line "missing dictionary" "$(write_attr $z/algorithm_params 'algo=zstd dict=/nonexistent')"
	line "directory as dictionary" "$(write_attr $z/algorithm_params 'algo=zstd dict=/tmp')"
	echo 1 >$z/reset
	line "lzo: comp_algorithm" "$(write_attr $z/comp_algorithm lzo)"
	line "lzo: algorithm_params" "$(write_attr $z/algorithm_params 'algo=lzo dict=/tmp/dict.small')"
	line "lzo: disksize" "$(write_attr $z/disksize $((pages * PAGE)))"
	written=$(write_pages)
	line "lzo: write" "$written"
	line "lzo: data" "$(same_data)"
	echo 1 >$z/reset
	line "recompression: comp_algorithm" "$(write_attr $z/comp_algorithm lz4)"
	line "recompression: recomp_algorithm" "$(write_attr $z/recomp_algorithm algo=zstd)"
	line "recompression: algorithm_params" \
		"$(write_attr $z/algorithm_params 'priority=1 dict=/tmp/dict.small')"
	line "recompression: disksize" "$(write_attr $z/disksize $((pages * PAGE)))"
	written=$(write_pages)
	line "recompression: write" "$written"
	line "recompression: recompress" "$(write_attr $z/recompress type=idle)"
	echo all >$z/idle
	line "recompression: recompress idle" "$(write_attr $z/recompress type=idle)"
	line "recompression: mm" "$(mm)"
	line "recompression: data" "$(same_data)"
	echo 1 >$z/reset
	# 7.3's deflate.winbits (algorithm_params): raw deflate's window, its range checked when
	# the backend starts (disksize); the compressed sizes follow the window.
	[ "$ABI_7_3" = 1 ] || return 0
	local bits
	for bits in -9 -15 -8 15 x; do
		line "deflate.winbits=$bits: algorithm_params" \
			"$(write_attr $z/comp_algorithm deflate) $(write_attr $z/algorithm_params "algo=deflate deflate.winbits=$bits")"
		line "deflate.winbits=$bits: disksize" "$(write_attr $z/disksize $((pages * PAGE)))"
		written=$(write_pages)
		line "deflate.winbits=$bits: write, mm" "$written $(mm)"
		line "deflate.winbits=$bits: data" "$(same_data)"
		echo 1 >$z/reset
	done
}

c_algorithms
against_c dict $LINES
# The scenario worked on C (a step failing the same way on both drivers would test nothing):
# zstd with each dictionary, lz4 and lz4hc without one or with the small one, lzo (6.12 and
# 7.2 ignore its dictionary; 7.3 refuses the disksize; where C has no lzo, the default
# algorithm stores the pages) and the recompression (where C has none, the primary algorithm
# stores them) stored every page and read it back.
lzo_reads_back=1
case " $ALGORITHMS " in *" lzo "*) lzo_reads_back=$((1 - ABI_7_3 + ABI_7_2)) ;; esac
check_eq "C zram's transcript: the writes that succeed in C read back" $((8 + lzo_reads_back)) \
	"$(grep -cE '^(zstd (none|small|large)|lz4 (none|small)|lz4hc (none|small)|lzo|recompression): data -> same$' /tmp/dict.c)"
rm -f /tmp/dict.*
zram_unload
finish
