// SPDX-License-Identifier: GPL-2.0
/*
 * vecwrite DEVICE PAGE: one direct write (pwritev, O_DIRECT) of five pages at page number PAGE
 * of DEVICE, from four buffers, two of which start 512 bytes into a memory page: the bio then
 * has two partial pieces for disk page 0, whole pages 1 and 2, two partial pieces for page 3
 * and a whole page 4. Reads the five pages back (O_DIRECT) and compares. The data is text
 * (compressible), different in every page. Exits 0 if they read back as written, 1 if not,
 * 2 on a failed call (the error on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

static void fill_text(char *buf, size_t len, unsigned int page)
{
	size_t at = 0;
	unsigned int line = 0;

	while (at < len) {
		char text[64];
		int n = snprintf(text, sizeof(text), "page %u line %u of a mixed write\n", page, line++);
		size_t take = (size_t)n < len - at ? (size_t)n : len - at;

		memcpy(buf + at, text, take);
		at += take;
	}
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	struct iovec iov[4];
	char *area, *want, *got;
	off_t offset;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: vecwrite DEVICE PAGE\n");
		return 2;
	}
	offset = (off_t)atoll(argv[2]) * page;
	/* Eight memory pages for the buffers, a gap page after each so that no two merge. */
	area = mmap(NULL, 16 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	want = aligned_alloc(page, 5 * page);
	got = aligned_alloc(page, 5 * page);
	if (area == MAP_FAILED || !want || !got) {
		fprintf(stderr, "vecwrite: out of memory\n");
		return 2;
	}
	for (unsigned int i = 0; i < 5; i++)
		fill_text(want + i * page, page, i);
	/* Disk page 0 from 512 bytes into a memory page: two partial pieces. */
	iov[0].iov_base = area + 512;
	iov[0].iov_len = page;
	/* Disk pages 1 and 2 from aligned memory: whole pages. */
	iov[1].iov_base = area + 3 * page;
	iov[1].iov_len = 2 * page;
	/* Disk page 3 misaligned again, page 4 aligned. */
	iov[2].iov_base = area + 6 * page + 512;
	iov[2].iov_len = page;
	iov[3].iov_base = area + 9 * page;
	iov[3].iov_len = page;
	for (unsigned int i = 0, at = 0; i < 4; at += iov[i].iov_len, i++)
		memcpy(iov[i].iov_base, want + at, iov[i].iov_len);

	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "vecwrite: open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (pwritev(fd, iov, 4, offset) != 5 * page) {
		fprintf(stderr, "vecwrite: pwritev: %s\n", strerror(errno));
		return 2;
	}
	if (pread(fd, got, 5 * page, offset) != 5 * page) {
		fprintf(stderr, "vecwrite: pread: %s\n", strerror(errno));
		return 2;
	}
	close(fd);
	for (unsigned int i = 0; i < 5; i++) {
		if (memcmp(want + i * page, got + i * page, page)) {
			fprintf(stderr, "vecwrite: page %u differs\n", i);
			return 1;
		}
	}
	return 0;
}
