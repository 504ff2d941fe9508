// SPDX-License-Identifier: GPL-2.0
/*
 * memfill: fills anonymous memory page by page with patterns that exercise every kind of page
 * zram stores (zero, same-filled with a non-zero word, compressible text, incompressible
 * noise), then reads every page back and checks it. With more memory than the machine has,
 * most pages go through swap. Pages are the kernel's (4 or 16 KiB), so that each page zram
 * stores is of one kind. Usage: memfill MIB [PASSES]. Exits 1 on any mismatch.
 *
 * With MEMFILL_MAKE_IT_FAIL=1 in its environment it marks itself for fault injection
 * (/proc/self/make-it-fail) once its memory is mapped: only the filling, and the swapping it
 * causes, then see failed allocations, never its exec or its mmap. It first locks what it has
 * mapped so far (code, data, stack, TLS) into memory: the kernel writes the thread's rseq area
 * in the TLS on its own, and a swapped-out TLS page that cannot be read back there (an injected
 * allocation failure) ends the process with SIGSEGV, a failure of the test, not of zram.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page_size;

static uint64_t noise(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* The content of page `index` in pass `pass`, one of four kinds. */
static void make_page(unsigned char *page, size_t index, unsigned pass)
{
	uint64_t *words = (uint64_t *)page;
	uint64_t seed = (index + 1) * 0x9e3779b97f4a7c15ull + pass;
	size_t i;

	switch ((index + pass) % 4) {
	case 0: /* zero */
		memset(page, 0, page_size);
		break;
	case 1: /* one repeated non-zero word */
		for (i = 0; i < page_size / 8; i++)
			words[i] = seed | 1;
		break;
	case 2: /* compressible: a numbered text line repeated */
		for (i = 0; i < page_size; i++)
			page[i] = "memfill page  "[i % 14] + (i % 14 == 13 ? (index % 10) : 0);
		words[0] = index;
		break;
	default: /* incompressible */
		for (i = 0; i < page_size / 8; i++)
			words[i] = noise(&seed);
		break;
	}
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	unsigned passes = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	size_t pages, index, bad = 0;
	unsigned char *expected;
	unsigned char *memory;
	unsigned pass;

	page_size = sysconf(_SC_PAGESIZE);
	pages = mib * 1024 * 1024 / page_size;
	expected = malloc(page_size);
	if (!expected) {
		perror("malloc");
		return 2;
	}
	if (getenv("MEMFILL_MAKE_IT_FAIL") && mlockall(MCL_CURRENT)) {
		perror("mlockall");
		return 2;
	}
	memory = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (memory == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	if (getenv("MEMFILL_MAKE_IT_FAIL")) {
		int fd = open("/proc/self/make-it-fail", O_WRONLY);

		if (fd < 0 || write(fd, "1", 1) != 1) {
			perror("make-it-fail");
			return 2;
		}
		close(fd);
	}
	for (pass = 0; pass < passes; pass++) {
		for (index = 0; index < pages; index++)
			make_page(memory + index * page_size, index, pass);
		for (index = 0; index < pages; index++) {
			make_page(expected, index, pass);
			if (memcmp(expected, memory + index * page_size, page_size)) {
				if (bad < 10)
					fprintf(stderr, "memfill: page %zu differs in pass %u\n", index, pass);
				bad++;
			}
		}
	}
	printf("memfill: %zu MiB, %u pass(es), %zu pages checked, %zu mismatches\n", mib, passes,
	       pages * passes, bad);
	return bad ? 1 : 0;
}
