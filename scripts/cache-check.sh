#!/bin/bash
# The cache's pruning (scripts/cache.sh prune) on a cache planted in a scratch directory: the
# entries this tree uses stay, each kind of stale one goes. Prints "check: ok - ..." or
# "check: FAILED - ..." lines.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
name=$(ARCH_NAME=x86_64 KCONFIG_VARIANT= KERNEL_SERIES=$KSRC_SERIES KERNEL_PREPARED_ONLY=0 kernel_name)
key=$(ARCH_NAME=x86_64 KCONFIG_VARIANT= KERNEL_SERIES=$KSRC_SERIES kernel_key)
clients=$(ZRAM_RS_CACHE=$scratch/cache "$here/clients.sh" dir)
kept=(
	"src/linux-source-$KSRC_SERIES" "kernel/$name-$key" "kernel/.$name-$key.lock" "module/$name-$key"
	"vm/$name" vm/arm64-16k vm/debian-7.3-rt-amd64 kernel/debian-7.3-cloud-amd64 kernel/debian-unstable-amd64
	vm/debian-unstable-amd64 debian/unstable-user-amd64 apt/unstable
	debian/trixie-user-amd64 debian/trixie-user-amd64.lock apt/trixie "tools-bindgen-$BINDGEN_VERSION"
	arm64-userland "${clients#"$scratch/cache/"}"
)
stale=(
	"kernel/$name-0123456789abcdef" "kernel/.$name-0123456789abcdef.lock" "module/$name-0123456789abcdef"
	kernel/x86_64-nosuchvariant-0123456789abcdef vm/x86_64-nosuchvariant vm/debian-7.2-amd64 kernel/debian-sid-amd64 debian/sid-user-amd64
	src/linux-source-6.1 src/linux-source-6.1.tar.xz tools-bindgen-0.65.1 tools debian/trixie-0123456789ab
	debian/trixie-user-amd64.new apt/bookworm clients/0123456789ab qemu-plugin/1.0.0 kernel/x86_64
)
for e in "${kept[@]}" "${stale[@]}"; do
	mkdir -p "$scratch/cache/$(dirname "$e")"
	case $e in
	src/linux-source-"$KSRC_SERIES") ln -s "$KSRC" "$scratch/cache/$e" ;;
	*.lock | *.tar.xz) : >"$scratch/cache/$e" ;;
	*) mkdir -p "$scratch/cache/$e" && echo planted >"$scratch/cache/$e/file" ;;
	esac
done
ZRAM_RS_CACHE=$scratch/cache BINDGEN=$BINDGEN "$here/cache.sh" prune 2>"$scratch/log"
rc=$?
missing= left=
for e in "${kept[@]}"; do [ -e "$scratch/cache/$e" ] || missing+=" $e"; done
for e in "${stale[@]}"; do [ ! -e "$scratch/cache/$e" ] || left+=" $e"; done
[ -z "$missing" ] || echo "cache-check: removed, though used:$missing"
[ -z "$left" ] || echo "cache-check: kept, though stale:$left"
[ $rc = 0 ] || cat "$scratch/log"
if [ $rc = 0 ] && [ -z "$missing$left" ]; then
	echo "check: ok - the cache's pruning keeps the ${#kept[@]} planted entries the tree uses and removes the ${#stale[@]} stale ones"
else
	echo "check: FAILED - the cache's pruning keeps the ${#kept[@]} planted entries the tree uses and removes the ${#stale[@]} stale ones"
fi
