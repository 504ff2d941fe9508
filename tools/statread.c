// SPDX-License-Identifier: GPL-2.0
/*
 * statread FILE SECONDS: reads FILE whole, as a statistics reader does (open, read, close),
 * over and over for SECONDS of the clock, timing each read with CLOCK_MONOTONIC (under QEMU's
 * instruction clock, a nanosecond is one guest instruction). Prints one line:
 *   <reads> <p50 ns> <p99 ns> <p99.9 ns> <max ns>
 * and exits 1 if any read failed (the failure on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_READS (1 << 22)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int compare(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* The value below which a fraction `part` (0..1) of the sorted `n` latencies lie. */
static long long percentile(const long long *sorted, long n, double part)
{
	long i = (long)(part * (double)n);

	if (i >= n)
		i = n - 1;
	return sorted[i];
}

int main(int argc, char **argv)
{
	static long long latency[MAX_READS];
	char buf[65536];
	long n = 0;
	long long end;

	if (argc != 3) {
		fprintf(stderr, "usage: statread FILE SECONDS\n");
		return 2;
	}
	end = now_ns() + atoll(argv[2]) * 1000000000LL;
	while (n < MAX_READS) {
		long long start = now_ns();
		int fd = open(argv[1], O_RDONLY);
		ssize_t got;

		if (fd < 0) {
			fprintf(stderr, "statread: open %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		do
			got = read(fd, buf, sizeof(buf));
		while (got > 0);
		if (got < 0) {
			fprintf(stderr, "statread: read %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		close(fd);
		latency[n] = now_ns() - start;
		n++;
		if (start >= end)
			break;
	}
	qsort(latency, n, sizeof(latency[0]), compare);
	printf("%ld %lld %lld %lld %lld\n", n, percentile(latency, n, 0.50),
	       percentile(latency, n, 0.99), percentile(latency, n, 0.999), latency[n - 1]);
	return 0;
}
