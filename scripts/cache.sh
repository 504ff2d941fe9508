#!/bin/bash
# usage: cache.sh list    every entry of the cache (ZRAM_RS_CACHE), its size and whether the
#                         tree uses it (make cache)
#        cache.sh prune   removes the entries the tree does not use (make check and make run
#                         end with it; kernel.sh, debian-kernel.sh and the other builders keep
#                         only what they use of their own kind)
#        cache.sh clean   removes the whole cache (make cache-clean)
# An entry is a directory or file one level below the cache's top (apt/trixie, kernel/NAME-KEY,
# src/linux-source-7.3.tar.xz, ...), or the top-level one itself where it has no parts
# (arm64-userland). The tree uses an entry when its scripts would look for it under that name
# now: a kernel build whose key (version, fragments, tools) is the current one, a module or VM
# work directory of a kernel the tree can build, the source of a series the tree names, the
# bindgen, client packages, QEMU plugin and Debian roots of today's versions and package lists.
# What cannot be judged (a kernel whose source is not unpacked yet) is kept, and so is anything
# whose lock someone holds (a build in progress). Removals never cross a file system boundary,
# and never happen with something mounted inside the cache (a Debian root in use).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
cache=$ZRAM_RS_CACHE

# kernel_version SERIES: the version of the unpacked source of SERIES (empty when not unpacked).
declare -A versions=()
kernel_version() {
	if [ -z "${versions[$1]+set}" ]; then
		local src=$cache/src/linux-source-$1
		versions[$1]=
		[ ! -f "$src/Makefile" ] || versions[$1]=$(make -s -C "$src" kernelversion 2>/dev/null || true)
	fi
	echo "${versions[$1]}"
}

# valid_name NAME: NAME is a kernel the tree can build or install (kernel_name's forms: ARCH,
# -VARIANT, -7.3, -prepared; debian-7.3-FLAVOUR, debian-unstable-FLAVOUR). Sets arch, variant
# and series (a prepared
# tree's key is the built one's).
valid_name() {
	local name=$1 rest
	arch= variant= series=6.12
	case $name in
	debian-7.3-amd64 | debian-7.3-cloud-amd64 | debian-7.3-rt-amd64 | debian-unstable-amd64 | \
		debian-unstable-cloud-amd64 | debian-unstable-rt-amd64)
		series=debian
		return 0
		;;
	x86_64 | x86_64-* | arm64 | arm64-*) ;;
	*) return 1 ;;
	esac
	arch=${name%%-*}
	rest=${name#"$arch"}
	rest=${rest#-}
	if [ "$rest" = prepared ] || [[ $rest == *-prepared ]]; then
		rest=${rest%prepared}
		rest=${rest%-}
	fi
	if [ "$rest" = 7.3 ] || [[ $rest == *-7.3 ]]; then
		series=7.3
		rest=${rest%7.3}
		rest=${rest%-}
	fi
	variant=$rest
	case $variant in
	"") ;;
	base | 6.12 | 7.3 | x86_64 | arm64) return 1 ;;
	*) [ -f "$ZRAM_RS_TOP/kconfig/$variant.config" ] || return 1 ;;
	esac
}

# used KIND ENTRY: whether the tree uses ENTRY (a path relative to the cache) of KIND (its top
# directory): prints "yes", "no" or "kept" (cannot be judged now).
used() {
	local kind=$1 entry=$2 base=${2##*/}
	case $kind in
	apt)
		case $base in trixie | trixie-backports | unstable) echo yes ;; *) echo no ;; esac
		;;
	arm64-userland) echo yes ;;
	clients)
		[ "$cache/$entry" = "$("$here/clients.sh" dir)" ] && echo yes || echo no
		;;
	debian)
		local root=${base%.lock}
		case $root in
		trixie-user-amd64 | trixie-user-cloud-amd64 | trixie-user-rt-amd64 | unstable-user-amd64 | \
			unstable-user-cloud-amd64 | unstable-user-rt-amd64) echo yes ;;
		*)
			[ "$cache/debian/$root" = "$(DEBIAN_ROOT=toolchain "$here/debian-root.sh" path)" ] &&
				echo yes || echo no
			;;
		esac
		;;
	kernel | module)
		local name=${base#.} key
		name=${name%.lock}
		if valid_name "$name" && [ "$series" = debian ]; then
			# Debian's kernel: installed, not built, under its flavour's name (kernel/ only).
			[ "$kind" = kernel ] && echo yes || echo no
			return
		fi
		key=${name##*-}
		name=${name%-*}
		if ! [[ $key =~ ^[0-9a-f]{16}$ ]] || ! valid_name "$name"; then
			echo no
			return
		fi
		if [ -z "$(kernel_version "$series")" ] || ! [ -x "$BINDGEN" ]; then
			echo kept
			return
		fi
		[ "$key" = "$(ARCH_NAME=$arch KCONFIG_VARIANT=$variant KERNEL_SERIES=$series \
			KSRC=$cache/src/linux-source-$series kernel_key)" ] && echo yes || echo no
		;;
	qemu-plugin)
		[ "$base" = "$(qemu_upstream_version)" ] && echo yes || echo no
		;;
	src)
		case $base in
		linux-source-6.12 | linux-source-7.3 | linux-source-7.3.tar.xz) echo yes ;;
		*) echo no ;;
		esac
		;;
	tools-bindgen-*)
		[ "$kind" = "tools-bindgen-$BINDGEN_VERSION" ] && echo yes || echo no
		;;
	vm)
		valid_name "$base" && echo yes || echo no
		;;
	*) echo no ;;
	esac
}

# entries: "KIND ENTRY" for each entry of the cache.
entries() {
	local top sub
	for top in "$cache"/* "$cache"/.[!.]*; do
		[ -e "$top" ] || continue
		case ${top##*/} in
		apt | clients | debian | kernel | module | qemu-plugin | src | vm)
			for sub in "$top"/* "$top"/.[!.]*; do
				[ -e "$sub" ] || continue
				echo "${top##*/} ${sub#"$cache"/}"
			done
			;;
		*) echo "${top##*/} ${top#"$cache"/}" ;;
		esac
	done
}

# lock_of ENTRY: the lock file guarding ENTRY while something builds or uses it (empty if none).
lock_of() {
	case $1 in
	kernel/.*.lock | debian/*.lock) echo "$cache/$1" ;;
	kernel/*) echo "$cache/kernel/.${1#kernel/}.lock" ;;
	debian/*) echo "$cache/${1%.new}.lock" ;;
	esac
}

# mounted PATH: something is mounted at or below PATH.
mounted() {
	local real
	real=$(realpath -m "$1")
	awk -v a="$real/" '{ gsub(/\\040/, " ", $2); if (index($2 "/", a) == 1) found = 1 } END { exit !found }' \
		/proc/self/mounts
}

case ${1:-} in
list)
	if [ ! -d "$cache" ]; then
		echo "cache: $cache is empty"
		exit 0
	fi
	echo "cache: $cache ($(du -sh "$cache" | cut -f1); $(df -h --output=avail "$cache" | tail -n 1 | tr -d ' ') free on its file system)"
	printf '%-6s  %-4s  %s\n' size used entry
	entries | while read -r kind entry; do
		# (a lock goes with its entry)
		[[ $entry != *.lock ]] || continue
		printf '%-6s  %-4s  %s\n' "$(du -sh "$cache/$entry" 2>/dev/null | cut -f1)" "$(used "$kind" "$entry")" "$entry"
	done
	echo "(make cache-clean removes it all; make check and make run remove the entries marked no)"
	;;
prune)
	[ -d "$cache" ] || exit 0
	entries | while read -r kind entry; do
		[ "$(used "$kind" "$entry")" = no ] || continue
		path=$cache/$entry
		lock=$(lock_of "$entry")
		if mounted "$path"; then
			echo "cache: $entry has mounts, not removed" >&2
			continue
		fi
		if [ -n "$lock" ] && [ -e "$lock" ] && [ "$lock" != "$path" ]; then
			# Under its lock, taken without waiting: in use means kept for now.
			if ! (flock -n 9 && rm -rf --one-file-system "$path") 9<"$lock"; then
				[ ! -e "$path" ] || echo "cache: $entry is in use, kept" >&2
				continue
			fi
		else
			rm -rf --one-file-system "$path"
		fi
		echo "cache: removed $entry (not used by this tree)" >&2
	done
	;;
clean)
	[ -d "$cache" ] || exit 0
	if mounted "$cache"; then
		echo "cache: something is mounted inside $cache (a Debian root in use?); not removed" >&2
		exit 1
	fi
	rm -rf --one-file-system "$cache"
	echo "cache: removed $cache" >&2
	;;
*)
	echo "usage: cache.sh list|prune|clean" >&2
	exit 2
	;;
esac
