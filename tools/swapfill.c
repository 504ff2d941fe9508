// SPDX-License-Identifier: GPL-2.0
/*
 * swapfill: swaps a file's bytes out and in as anonymous memory. Copies FILE into anonymous
 * memory aligned to 64 KiB (so that multi-size THP folios of up to 64 KiB, where enabled,
 * hold it whole), asks the memory cgroup it runs in to reclaim that much through RECLAIM (the
 * cgroup's memory.reclaim), which swaps the copy out, then reads every byte of the copy back
 * (swapping it in) and compares a checksum with the one taken while copying.
 *
 * Usage: swapfill FILE RECLAIM [STAT...]. Prints "swapped <kB>" (VmSwap once reclaimed), each
 * STAT file's first line once reclaimed ("<STAT> <line>": the stored data while swapped out),
 * and "intact" or "differs"; exits 1 when the copy differs, 2 on a usage or system error.
 *
 * A sync(2) after the copy, one after the reclaim and one after the read-back mark the phases
 * of make bench's instruction counting (BENCH_PROFILE=insn): the reclaim (swap-out) is one
 * phase, the read-back (swap-in) the next.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALIGN (64UL << 10)

static uint64_t checksum(const uint64_t *words, size_t count)
{
	uint64_t hash = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < count; i++)
		hash = (hash ^ words[i]) * 0x100000001b3ull;
	return hash;
}

/* VmSwap of this process in kB, or -1. */
static long vm_swap_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *status = fopen("/proc/self/status", "r");

	if (!status)
		return -1;
	while (fgets(line, sizeof(line), status))
		if (sscanf(line, "VmSwap: %ld kB", &kb) == 1)
			break;
	fclose(status);
	return kb;
}

/* "<path> <first line>" of a stat file. */
static void print_first_line(const char *path)
{
	char line[512] = "";
	FILE *stat = fopen(path, "r");

	if (stat) {
		if (!fgets(line, sizeof(line), stat))
			line[0] = 0;
		fclose(stat);
	}
	line[strcspn(line, "\n")] = 0;
	printf("%s %s\n", path, line);
}

int main(int argc, char **argv)
{
	struct stat st;
	size_t len, done = 0;
	unsigned char *map, *copy;
	uint64_t before, after;
	char amount[32];
	long swapped;
	int fd, reclaim, i;

	if (argc < 3) {
		fprintf(stderr, "usage: swapfill FILE RECLAIM [STAT...]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0) {
		perror(argv[1]);
		return 2;
	}
	/* Whole 64-bit words; the rest of the last one stays zero. */
	len = ((size_t)st.st_size + 7) & ~7UL;
	map = mmap(NULL, len + ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	copy = (unsigned char *)(((uintptr_t)map + ALIGN - 1) & ~(ALIGN - 1));
	while (done < (size_t)st.st_size) {
		ssize_t got = read(fd, copy + done, (size_t)st.st_size - done);

		if (got <= 0) {
			perror("read");
			return 2;
		}
		done += (size_t)got;
	}
	close(fd);
	before = checksum((const uint64_t *)copy, len / 8);
	reclaim = open(argv[2], O_WRONLY);
	if (reclaim < 0) {
		perror(argv[2]);
		return 2;
	}
	snprintf(amount, sizeof(amount), "%zu", len);
	sync();
	/* memory.reclaim answers EAGAIN when it reclaimed less than asked: what it did counts. */
	if (write(reclaim, amount, strlen(amount)) < 0)
		perror("memory.reclaim (partly reclaimed)");
	swapped = vm_swap_kb();
	for (i = 3; i < argc; i++)
		print_first_line(argv[i]);
	sync();
	after = checksum((const uint64_t *)copy, len / 8);
	sync();
	close(reclaim);
	printf("swapped %ld\n%s\n", swapped, before == after ? "intact" : "differs");
	return before == after ? 0 : 1;
}
