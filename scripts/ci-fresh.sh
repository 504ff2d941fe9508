#!/bin/bash
# make ci-fresh: times .ci/run as CI runs it on a fresh machine — a clean clone of the committed
# HEAD and an empty cache, both in a temporary directory that is removed when the run ends,
# whatever the outcome (the machine's packages stay installed: install-deps.sh finds them). The
# cache's size is sampled every minute; the end prints the run's time, its summary, the cache's
# peak and final size and the free space before and after.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
base=$(mktemp -d "${TMPDIR:-/var/tmp}/zram_rs-ci-fresh.XXXXXX")
cleanup() {
	[ -z "${sampler:-}" ] || kill "$sampler" 2>/dev/null
	# The Debian roots' mounts are lazily detached when their commands end: retry a while.
	local i
	for i in 1 2 3 4 5 6; do
		ZRAM_RS_CACHE=$base/cache "$here/cache.sh" clean >/dev/null 2>&1 && break
		sleep 10
	done
	rm -rf --one-file-system "$base"
	if [ -e "$base" ]; then
		echo "ci-fresh: $base could not be removed (mounted?)" >&2
	else
		echo "ci-fresh: removed $base"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_gb() { df -BG --output=avail "$1" | tail -n 1 | tr -dc 0-9; }
git clone -q "$top" "$base/tree" || exit 1
mkdir -p "$base/cache"
echo "ci-fresh: a clean clone of $(git -C "$base/tree" rev-parse --short HEAD) in $base/tree, an empty cache in $base/cache; $(free_gb "$base") GB free"
(
	peak=0
	while sleep 60; do
		kb=$(du -sk "$base/cache" 2>/dev/null | cut -f1)
		[ "${kb:-0}" -le "$peak" ] || { peak=$kb; echo "$peak" >"$base/peak"; }
	done
) &
sampler=$!
free_before=$(free_gb "$base")
start=$(date +%s)
ZRAM_RS_CACHE=$base/cache "$base/tree/.ci/run" 2>&1 | tee "$base/log"
rc=${PIPESTATUS[0]}
seconds=$(($(date +%s) - start))
kill "$sampler" 2>/dev/null
sampler=
echo "=== ci-fresh"
echo "ci-fresh: .ci/run exited $rc after $seconds s ($((seconds / 60)) min) from an empty cache"
grep -E '^[0-9]+ passed, [0-9]+ failed$' "$base/log" | tail -n 1 | sed 's/^/ci-fresh: /'
echo "ci-fresh: cache at the end $(du -sh "$base/cache" | cut -f1), at its peak $(($(cat "$base/peak" 2>/dev/null || echo 0) / 1048576)) GB (sampled each minute)"
ZRAM_RS_CACHE=$base/cache "$here/cache.sh" list | sed 's/^/ci-fresh: /'
echo "ci-fresh: free space $free_before GB before, $(free_gb "$base") GB at the end (before removal)"
exit "$rc"
