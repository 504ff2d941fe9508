// SPDX-License-Identifier: GPL-2.0
/*
 * stosq: the physical limit of filling pages in this machine. Fills one 4 KiB page with
 * `rep stosq` (the instruction zram_rs's x86_64 memset64 uses) over and over, and prints the
 * rate in GB/s. Usage: stosq [SECONDS]. x86_64 only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static uint64_t page[512] __attribute__((aligned(4096)));
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	double start = now(), elapsed;
	uint64_t pages = 0;

	do {
		for (int i = 0; i < 1024; i++) {
			void *dst = page;
			uint64_t count = 512, value = pages + i;

			asm volatile("rep stosq" : "+D"(dst), "+c"(count) : "a"(value) : "memory");
		}
		pages += 1024;
		elapsed = now() - start;
	} while (elapsed < seconds);
	printf("stosq: %.2f GB/s (%llu pages in %.2f s)\n", pages * 4096.0 / elapsed / 1e9,
	       (unsigned long long)pages, elapsed);
	return page[0] == 0 && pages == 0;
}
