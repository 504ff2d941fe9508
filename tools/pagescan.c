// SPDX-License-Identifier: GPL-2.0
/*
 * pagescan: reads a file or block device page by page (pages of the size given, default the
 * kernel's) and prints "PAGES NONZERO" — how many pages it read and how many hold a byte other
 * than zero. A figure of what a zram device stores that does not come from the driver's own
 * statistics: swap never writes a zero-filled page (the kernel keeps those in its zero map),
 * and a page never written, discarded or freed reads as zeros. Reads with O_DIRECT: the
 * block device's page cache may hold pages that swap, which bypasses it, changed since.
 * Usage: pagescan FILE [PAGE].
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t page_size = argc > 2 ? strtoul(argv[2], NULL, 10) : (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = 0, nonzero = 0, i, got;
	unsigned char *page = NULL;
	ssize_t n;
	int fd;

	if (argc < 2 || !page_size) {
		fprintf(stderr, "usage: pagescan FILE [PAGE]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign((void **)&page, 4096, page_size)) {
		perror(argv[1]);
		return 2;
	}
	for (;;) {
		for (got = 0; got < page_size; got += n) {
			n = read(fd, page + got, page_size - got);
			if (n < 0) {
				perror(argv[1]);
				return 2;
			}
			if (n == 0)
				break;
		}
		if (got == 0)
			break;
		pages++;
		for (i = 0; i < got; i++) {
			if (page[i]) {
				nonzero++;
				break;
			}
		}
		if (got < page_size)
			break;
	}
	printf("%zu %zu\n", pages, nonzero);
	return 0;
}
