#!/bin/bash
# C zram as the oracle: the same corpus (tests/oracle/corpus.sh: every attribute's reads and a
# corpus of bad and good writes in four device states, the control class) runs against C
# zram.ko and then zram_rs.ko in this boot; the transcripts must match line for line, except
# the documented deliberate differences (tests/oracle/differences-6.12, -7.2 or -7.3, for the
# kernel running), where zram_rs's own result
# is checked instead. Both transcripts must show every device state reached, and every line of
# them must have been compared.
. "$(dirname "$0")/lib.sh"
# Cases: three on the runs, two on the states, one per group of transcript lines (105, and 10
# more on 7.x for its two writeback attributes: see the grouping below), one on the lines
# compared.
plan $((3 + 2 + 105 + 10 * ABI_7_3 + 1))
oracle=$(dirname "$0")/oracle

# 7.3 answers an idle age at or beyond the uptime with success, before looking at the device:
# the corpus's small ages (1 to 16 seconds) must be below the uptime for both drivers' runs.
while [ "$(cut -d. -f1 /proc/uptime)" -lt 30 ]; do sleep 1; done
ZRAM_MODULE=zram bash "$oracle/corpus.sh" >/tmp/oracle.c 2>&1
ZRAM_MODULE=zram_rs bash "$oracle/corpus.sh" >/tmp/oracle.rs 2>&1
check "C zram ran the corpus to the end" grep -q '^unload: 0 0' /tmp/oracle.c
check "zram_rs ran the corpus to the end" grep -q '^unload: 0 0' /tmp/oracle.rs
lines=$(wc -l </tmp/oracle.c)
check_eq "same number of transcript lines" "$lines" "$(wc -l </tmp/oracle.rs)"
# The corpus's "state: ... -> yes" lines: each state the writes start from was reached.
states=9
check_eq "C zram's corpus reached every state ($states state lines)" "$states yes, 0 NO" \
	"$(grep -c '^state: .* -> yes$' /tmp/oracle.c) yes, $(grep -c '^state: .* -> NO$' /tmp/oracle.c) NO"
check_eq "zram_rs's corpus reached every state ($states state lines)" "$states yes, 0 NO" \
	"$(grep -c '^state: .* -> yes$' /tmp/oracle.rs) yes, $(grep -c '^state: .* -> NO$' /tmp/oracle.rs) NO"

# One case per group of lines (the words before the value), comparing every line in it.
differences=$oracle/differences-6.12
[ $ABI_7_3 = 0 ] || differences=$oracle/differences-7.3
[ $ABI_7_2 = 0 ] || differences=$oracle/differences-7.2
paste -d '\n' /tmp/oracle.c /tmp/oracle.rs | awk -v differences="$differences" '
	BEGIN {
		FS = "\t"
		while ((getline line < differences) > 0) {
			split(line, part, "\t"); expected[part[1]] = part[2]; reason[part[1]] = part[3]
		}
		FS = " "
	}
	{
		c = $0; getline rs
		key = c; sub(/ -> .*/, "", key)
		group = key; n = split(key, word, " ")
		group = (n >= 3) ? word[1] " " word[2] : key
		lines[group]++
		if (key in expected) {
			got = rs; sub(/^.* -> /, "", got); sub(/ \|.*/, "", got)
			if (got != expected[key]) { bad[group] = bad[group] "\n#   " rs " (expected " expected[key] ")" }
			else deliberate[group] = deliberate[group] "\n#   differs on purpose: " key ": " reason[key]
		} else if (c != rs) {
			bad[group] = bad[group] "\n#   C:       " c "\n#   zram_rs: " rs
		}
		if (!(group in order)) { order[group] = ++groups; name[groups] = group }
	}
	END {
		for (i = 1; i <= groups; i++) {
			g = name[i]
			if (g in bad) print "FAIL\t" g "\t" lines[g] bad[g]
			else print "PASS\t" g "\t" lines[g] deliberate[g]
		}
	}
' >/tmp/oracle.result
total=0
while IFS=$'\t' read -r verdict group count; do
	[ -n "$verdict" ] || continue
	case $verdict in
	PASS | FAIL) ;;
	*) echo "$verdict"; continue ;; # detail lines of the previous group
	esac
	total=$((total + count))
	if [ "$verdict" = PASS ]; then
		ktap_test_pass "same as C zram: $group ($count cases)"
	else
		ktap_test_fail "same as C zram: $group ($count cases)"
	fi
done < <(sed 's/^#   /#\t/' /tmp/oracle.result | awk -F'\t' '$1 == "#" { print "# " $2; next } { print }')
ktap_print_msg "$total transcript lines compared"
check "every transcript line was compared ($total of $lines, at least 1500)" \
	test "$total" = "$lines" -a "$total" -ge 1500
rm -f /tmp/oracle.c /tmp/oracle.rs /tmp/oracle.result
finish
