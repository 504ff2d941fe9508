// SPDX-License-Identifier: GPL-2.0
/*
 * dioread DEVICE OFFSET LENGTH: one direct read (pread, O_DIRECT) of LENGTH bytes at byte
 * OFFSET of DEVICE into a buffer that lies in one transparent huge page (madvise
 * MADV_HUGEPAGE, the size the kernel names in hpage_pmd_size), so that the read's pages are
 * physically contiguous and the bio holds them in one or few bvecs, as a large folio's; writes
 * the bytes read to stdout. Exits 0 when all LENGTH bytes were read into a huge page, 3 when
 * the buffer is not one (no huge page to be had: nothing is read), 2 on a failed call (the
 * error on stderr).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t huge_page_size(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	unsigned long size = 0;

	if (!f || fscanf(f, "%lu", &size) != 1)
		size = 0;
	if (f)
		fclose(f);
	return size;
}

/* Whether the page at addr is part of a huge page: /proc/self/smaps' AnonHugePages of its
 * mapping. */
static int is_huge(void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	int in = 0, huge = 0;
	unsigned long start, end, kb;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = (unsigned long)addr >= start && (unsigned long)addr < end;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			huge = kb > 0;
	}
	fclose(f);
	return huge;
}

int main(int argc, char **argv)
{
	size_t huge = huge_page_size(), len, done = 0;
	off_t offset;
	char *map, *buf;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: dioread DEVICE OFFSET LENGTH\n");
		return 2;
	}
	offset = strtoll(argv[2], NULL, 0);
	len = strtoull(argv[3], NULL, 0);
	if (!huge || len > huge) {
		fprintf(stderr, "dioread: LENGTH above the huge page (%zu bytes), or no THP\n", huge);
		return 2;
	}
	map = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	buf = (char *)(((unsigned long)map + huge - 1) & ~(huge - 1));
	if (madvise(buf, huge, MADV_HUGEPAGE)) {
		perror("madvise");
		return 2;
	}
	buf[0] = 1;
	if (!is_huge(buf)) {
		fprintf(stderr, "dioread: no huge page for the buffer\n");
		return 3;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, offset + done);

		if (n <= 0) {
			perror("pread");
			return 2;
		}
		done += n;
	}
	if (fwrite(buf, 1, len, stdout) != len) {
		perror("write");
		return 2;
	}
	return 0;
}
