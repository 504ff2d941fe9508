// SPDX-License-Identifier: GPL-2.0
/*
 * memfill: fills anonymous memory page by page with patterns that exercise every kind of page
 * zram stores (zero, same-filled with a non-zero word, compressible text, incompressible
 * noise), then reads every page back and checks it. With more memory than the machine has,
 * most pages go through swap. Usage: memfill MIB [PASSES]. Exits 1 on any mismatch.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096

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
		memset(page, 0, PAGE);
		break;
	case 1: /* one repeated non-zero word */
		for (i = 0; i < PAGE / 8; i++)
			words[i] = seed | 1;
		break;
	case 2: /* compressible: a numbered text line repeated */
		for (i = 0; i < PAGE; i++)
			page[i] = "memfill page  "[i % 14] + (i % 14 == 13 ? (index % 10) : 0);
		words[0] = index;
		break;
	default: /* incompressible */
		for (i = 0; i < PAGE / 8; i++)
			words[i] = noise(&seed);
		break;
	}
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	unsigned passes = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	size_t pages = mib * 1024 * 1024 / PAGE, index, bad = 0;
	unsigned char expected[PAGE];
	unsigned char *memory;
	unsigned pass;

	memory = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (memory == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (pass = 0; pass < passes; pass++) {
		for (index = 0; index < pages; index++)
			make_page(memory + index * PAGE, index, pass);
		for (index = 0; index < pages; index++) {
			make_page(expected, index, pass);
			if (memcmp(expected, memory + index * PAGE, PAGE)) {
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
