#!/bin/bash
# hot_remove against users of the device. Each round hot-adds a device, starts a loop that
# keeps opening it, reading it and closing it (at times holding it open a moment) or that swaps
# on and off it, and writes the id to hot_remove until the device is gone. Every answer must be
# OK or EBUSY ("Device or resource busy"), as C zram's, and over the rounds both must occur while
# the loop runs (so the race happened). A removal that slips between the busy check and the
# deletion leaves an open or swapped-on device deleted under its user: a read after a successful
# open must succeed, no swap area may remain, the module must unload, no oops (the VM checks the
# log), and the other devices keep working.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
plan $((12 + UNLOAD_CASES))

# shellcheck disable=SC2119 # (no module parameters)
zram_load
ctl=/sys/class/zram-control
rm -f /tmp/hotremove.lost

# user_open ID: opens the device, reads its first bytes, holds it open for a millisecond (but
# every eighth time) and closes it, again and again, so that it is closed only for moments,
# until it is gone (then succeeds) or 2000 times (then fails).
# An open that succeeded means the device cannot be removed until the close (hot_remove answers
# EBUSY), so the read must return the mark; each one that did not is logged.
mark="zram_rs: opened."
# Each user loop creates this once it has used the device.
started=/tmp/hotremove.started
user_open() {
	local dev=/dev/zram$1 i v
	for i in $(seq 1 2000); do
		[ -e "/sys/block/zram$1" ] || return 0
		if { exec 3<"$dev"; } 2>/dev/null; then
			v=
			read -r -N ${#mark} -u 3 v 2>/dev/null
			[ "$v" = "$mark" ] || echo "zram$1, use $i: read '$v'" >>/tmp/hotremove.lost
			[ -e $started ] || : >$started
			[ $((i % 8)) = 0 ] || usleep 1000
			exec 3<&-
		fi
	done
	return 1
}

# user_swap ID: swapon, a 3 ms pause, swapoff and another 3 ms pause, until the device is gone
# (then succeeds) or 60 times (then fails). The device is in use for about half of each turn,
# and the first hot_remove comes at any point of a turn (the mark is made while it is on), so
# that over the rounds both answers come (a swapoff right after the swapon, with the mark made
# after it, left the device in use for so short a time that a debug kernel's 12 rounds once
# saw no EBUSY).
user_swap() {
	local dev=/dev/zram$1 i
	for i in $(seq 1 60); do
		[ -e "/sys/block/zram$1" ] || return 0
		if swapon "$dev" 2>/dev/null; then
			[ -e $started ] || : >$started
			usleep 3000
			swapoff "$dev"
		fi
		usleep 3000
	done
	return 1
}

# remove ID: one hot_remove write from this shell (no new process, so that attempts come fast);
# sets r to "OK" or the error text.
remove() {
	if { echo "$1" >$ctl/hot_remove; } 2>/tmp/hotremove.err; then
		r=OK
	else
		read -r r </tmp/hotremove.err
		r=${r##*: }
	fi
}

# race_remove KIND ROUNDS: ROUNDS rounds of user_KIND against hot_remove. Sets ok (removals
# that ended the user loop), late (removals after it had ended by itself), busy, other (any
# other answer) and answers.
race_remove() {
	local kind=$1 rounds=$2 round id user tries r removed
	ok=0 late=0 busy=0 other=0 answers=0
	for round in $(seq 1 "$rounds"); do
		id=$(cat $ctl/hot_add)
		echo 16M >"/sys/block/zram$id/disksize"
		if [ "$kind" = swap ]; then
			mkswap "/dev/zram$id" >/dev/null
		else
			printf '%s' "$mark" >"/dev/zram$id"
		fi
		rm -f $started
		"user_$kind" "$id" &
		user=$!
		for tries in $(seq 1 1000); do
			[ ! -e $started ] || break
			usleep 5000
		done
		removed=0
		for tries in $(seq 1 1000); do
			remove "$id"
			answers=$((answers + 1))
			case $r in
			OK)
				removed=1
				break
				;;
			"Device or resource busy") busy=$((busy + 1)) ;;
			*)
				other=$((other + 1))
				ktap_print_msg "round $round, attempt $tries: hot_remove $id: $r"
				break
				;;
			esac
		done
		if wait $user; then
			[ $removed = 0 ] || ok=$((ok + 1))
		else
			[ $removed = 0 ] || late=$((late + 1))
		fi
		# Still there (the user loop outlasted every attempt): nobody uses it now.
		if [ -e "/sys/block/zram$id" ]; then
			remove "$id"
			answers=$((answers + 1))
			case $r in
			OK) late=$((late + 1)) ;;
			*)
				other=$((other + 1))
				ktap_print_msg "round $round, after the user loop: hot_remove $id: $r"
				;;
			esac
		fi
	done
	ktap_print_msg "$kind: $rounds rounds, $answers answers: $ok OK while the loop ran, $late OK after it, $busy EBUSY, $other other"
}

race_remove open 40
check_eq "open/close vs hot_remove: every answer OK or EBUSY" 0 $other
check "open/close vs hot_remove: EBUSY seen ($busy) and OK while the opener ran ($ok)" \
	test $busy -gt 0 -a $ok -gt 0
check_eq "open/close vs hot_remove: each of the 40 devices removed" 40 $((ok + late))
check_eq "open/close vs hot_remove: no device removed while open (every read after an open succeeded)" \
	0 "$( (cat /tmp/hotremove.lost 2>/dev/null || true) | wc -l)"
sed 's/^/# removed while open: /' /tmp/hotremove.lost 2>/dev/null | head -5

race_remove swap 12
check_eq "swapon/swapoff vs hot_remove: every answer OK or EBUSY" 0 $other
check "swapon/swapoff vs hot_remove: EBUSY seen ($busy) and OK while the swapper ran ($ok)" \
	test $busy -gt 0 -a $ok -gt 0
check_eq "swapon/swapoff vs hot_remove: each of the 12 devices removed" 12 $((ok + late))

check_eq "no swap area left" 0 "$(grep -c zram /proc/swaps)"
check_eq "only zram0 is left" "/sys/block/zram0" "$(echo /sys/block/zram*)"

# The devices that remain, and a new one, still work.
dd if=/dev/urandom of=/tmp/hotremove.data bs=64k count=16 2>/dev/null
# rw_works ID: initialises device ID, writes 1 MiB and reads it back.
rw_works() {
	echo 16M >"/sys/block/zram$1/disksize" &&
		dd if=/tmp/hotremove.data of="/dev/zram$1" bs=64k oflag=direct 2>/dev/null &&
		cmp -s /tmp/hotremove.data <(dd if="/dev/zram$1" bs=64k count=16 iflag=direct 2>/dev/null)
}
check "zram0 still works (1 MiB written and read back)" rw_works 0
id=$(cat $ctl/hot_add)
check "hot_add gives id 1 again and the device works" test "$id" = 1 -a -n "$(rw_works 1 && echo ok)"
check_eq "hot_remove of the idle device" OK "$(write_attr $ctl/hot_remove 1)"

rm -f /tmp/hotremove.data /tmp/hotremove.lost /tmp/hotremove.err $started
zram_unload
finish
