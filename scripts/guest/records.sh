#!/bin/bash
# records SEED BYTES: BYTES of text records such as a program keeps in memory, the same for the
# same SEED; records of another seed are of the same kinds (what a dictionary trained on such
# data holds). Sourced by the dictionary bench cell and tests/72-dictionaries.sh.
records() {
	awk -v seed="$1" -v bytes="$2" 'BEGIN {
		srand(seed)
		split("alpha beta gamma delta epsilon zeta eta theta", word, " ")
		split("ok pending failed retried", status, " ")
		while (n < bytes) {
			line = sprintf("record %d: %s %s status=%s value=%d owner=user%d\n",
				int(rand() * 100000), word[1 + int(rand() * 8)], word[1 + int(rand() * 8)],
				status[1 + int(rand() * 4)], int(rand() * 1000), int(rand() * 50))
			printf "%s", line
			n += length(line)
		}
	}' | head -c "$2"
}
