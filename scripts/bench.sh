#!/bin/bash
# make bench: C zram.ko against zram_rs.ko in one VM boot, cell by cell, the drivers taking
# turns BENCH_REPS times (default 5); then instruction counts of the scan and fill on this
# machine with callgrind. Writes results/bench-<time>/ (console log, CSV, JSON, chart PNG) and
# prints the table. A measurement, not a test: it exits 0 whenever it measured.
# BENCH_CLOCK=icount times by guest instructions instead of the host's clock (see vm.sh);
# BENCH_ONLY=<regex> limits the cells (names as in the table, plus "seed", "memory", "latency"
# and "stats");
# BENCH_PROFILE=1 adds one perf-sampled run per cell and driver (x86_64: the host's perf);
# BENCH_PROFILE=insn replaces the timed runs by one run per cell and driver whose guest
# instructions a QEMU plugin (tools/insn_count.c) counts: insn.txt, instructions per page
# (with BENCH_CLOCK=icount slower, and every column exact, not only the driver's own code);
# BENCH_LOG=<console log of an earlier run> redoes only the host part and the report.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
export BENCH_REPS=${BENCH_REPS:-5}
export BENCH_SIZE=${BENCH_SIZE:-32M}
export BENCH_CLOCK=${BENCH_CLOCK:-wall}
if [ "${BENCH_PROFILE:-0}" = 1 ]; then
	[ "$ARCH_NAME" = x86_64 ] || { echo "bench: BENCH_PROFILE=1 needs ARCH=x86_64" >&2; exit 2; }
	command -v perf >/dev/null || apt-get install -y -q linux-perf >&2
	export GUEST_EXTRA_TOOLS="$(command -v perf)"
fi
out=$ZRAM_RS_TOP/results/bench-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"

# The instruction-counting plugin, built against the plugin header of the QEMU that runs the VM
# (from Debian's source tarball of the installed version). Prints the plugin's path.
insn_plugin() {
	local upstream dir
	upstream=$(qemu_upstream_version)
	[ -n "$upstream" ] || { echo "bench: cannot tell the QEMU version" >&2; return 1; }
	dir=$ZRAM_RS_CACHE/qemu-plugin/$upstream
	mkdir -p "$dir"
	# Only this tool needs them: installed here rather than by install-deps.
	command -v curl >/dev/null || apt-get install -y -q curl >&2
	pkg-config --exists glib-2.0 2>/dev/null || apt-get install -y -q libglib2.0-dev >&2
	if [ ! -s "$dir/qemu-plugin.h" ]; then
		echo "bench: fetching qemu-plugin.h from Debian's qemu $upstream source" >&2
		curl -sSfL "$(debian_mirror)pool/main/q/qemu/qemu_$upstream.orig.tar.xz" |
			tar -xJO --wildcards '*/include/qemu/qemu-plugin.h' >"$dir/qemu-plugin.h.part"
		mv "$dir/qemu-plugin.h.part" "$dir/qemu-plugin.h"
	fi
	# shellcheck disable=SC2046 # (pkg-config's flags are words)
	gcc -O2 -Wall -Wno-unused-parameter -shared -fPIC -I"$dir" $(pkg-config --cflags glib-2.0) \
		-o "$dir/insn_count.so" "$ZRAM_RS_TOP/tools/insn_count.c" -lpthread
	echo "$dir/insn_count.so"
}

if [ "${BENCH_PROFILE:-0}" = insn ] && [ -z "${BENCH_LOG:-}" ]; then
	plugin=$(insn_plugin)
	kdir=$("$here/kernel.sh" | tail -n 1)
	case $ARCH_NAME in
	x86_64) sync_entry=__x64_sys_sync ;;
	arm64) sync_entry=__arm64_sys_sync ;;
	esac
	marker=$(awk -v entry="$sync_entry" '$3 == entry { print $1 }' "$kdir/System.map")
	plugin_args="marker=$marker,out=$out/insn-counts.txt"
	# Under the instruction clock QEMU's inline counters break the guest: count by calls.
	[ "$BENCH_CLOCK" != icount ] || plugin_args+=",inline=off"
	export VM_QEMU_EXTRA="-plugin $plugin,$plugin_args"
	cp "$kdir/System.map" "$out/System.map"
fi

# The corpus cell's data (scripts/corpus.py, built with the initramfs): not when counting.
if [ "${BENCH_PROFILE:-0}" != insn ] && [ -z "${BENCH_LOG:-}" ] && echo corpus | grep -Eq "${BENCH_ONLY:-.}"; then
	export GUEST_CORPUS=$ZRAM_RS_CACHE/vm/$(kernel_name)/corpus
fi

# The units cell's data: the corpus's kinds sampled in runs of 64 KiB (scripts/corpus.py's RUN),
# so that a unit's pages are neighbours as in memory; counted too (instructions per page are
# half of what the cell measures). The units-swap cell swaps the same kinds out and in.
if [ -z "${BENCH_LOG:-}" ] && printf 'units\nunits-swap\n' | grep -Eq "${BENCH_ONLY:-.}"; then
	export GUEST_CORPUS_UNITS=$ZRAM_RS_CACHE/vm/$(kernel_name)/corpus-units
fi

# The report runs on Debian's Python, with Debian's plotting library (not pip's: a plain Debian 12
# refuses pip installs into its Python, an externally managed environment).
python=/usr/bin/python3
dpkg -s python3-matplotlib >/dev/null 2>&1 || apt-get install -y -q python3-matplotlib >&2

if [ -n "${BENCH_LOG:-}" ]; then
	echo "bench: guest part taken from $BENCH_LOG"
	cp "$BENCH_LOG" "$out/console.log"
	for file in clock.txt insn-counts.txt System.map; do
		[ ! -e "$(dirname "$BENCH_LOG")/$file" ] || cp "$(dirname "$BENCH_LOG")/$file" "$out/"
	done
else
	echo "bench: guest part (TCG unless ACCEL=kvm; only same-boot ratios mean anything under TCG)"
	"$here/vm.sh" bench
	cp "$ZRAM_RS_CACHE/vm/$(kernel_name)/console-bench.log" "$out/console.log"
	echo "${ACCEL:-tcg} $BENCH_CLOCK" >"$out/clock.txt"
	# The corpus's sizes and digests, and its dictionary, beside the results.
	[ -z "${GUEST_CORPUS:-}" ] || cp "$GUEST_CORPUS/manifest.txt" "$GUEST_CORPUS/dict" "$out/"
	[ -z "${GUEST_CORPUS_UNITS:-}" ] || cp "$GUEST_CORPUS_UNITS/manifest.txt" "$out/manifest-units.txt"
fi

if [ -e "$out/insn-counts.txt" ]; then
	$python "$here/insn_report.py" "$out" "$out/System.map"
	echo "bench: results in $out"
	exit 0
fi

echo "bench: host part: instructions per 4 KiB page (valgrind --tool=callgrind)"
(cd "$ZRAM_RS_TOP" && cargo bench -p zram_rs_logic --no-run -q 2>/dev/null)
binary=$(find "$ZRAM_RS_TOP/target/release/deps" -name 'same_fill-*' -type f -executable -printf '%T@ %p\n' |
	sort -n | tail -n 1 | cut -d' ' -f2)
: >"$out/callgrind.txt"
for case in none scan-ours:same scan-loop:same scan-ours:middle scan-loop:middle scan-ours:last \
	scan-loop:last scan-ours:random scan-loop:random fill-ours fill-loop; do
	ZRAM_RS_COUNT=$case valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$binary" >/dev/null 2>&1
	total=$(callgrind_annotate "$out/cg.out" | awk '/PROGRAM TOTALS/ && !seen { gsub(",", "", $1); print $1; seen = 1 }')
	echo "$case $total" >>"$out/callgrind.txt"
done
rm -f "$out/cg.out"

$python "$here/bench_report.py" "$out"
echo "bench: results in $out"
