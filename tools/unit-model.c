// SPDX-License-Identifier: GPL-2.0
/*
 * unit-model: what compressing a file in units of several pages would store and cost, with the
 * user-space builds of the libraries zram's compressors come from, before any driver does it.
 * Usage: unit-model ALGORITHM UNIT FILE, ALGORITHM one of zstd, lz4, lzo, deflate and UNIT the
 * bytes of one unit (a multiple of the 4 KiB page). Prints one line of key=value figures:
 *
 *   pages         the file's pages (cut into whole units; a last partial one is left out)
 *   same          pages made of one repeated 64-bit word (stored without an object, as zram does)
 *   stored        bytes a zsmalloc pool would hold: each object rounded up to its size class (16
 *                 bytes, at least 32), a page-sized object for a page that compresses to
 *                 zsmalloc's huge class or more, and a unit's object cut into pieces of at most a
 *                 page (zsmalloc's largest object), every piece but the last a whole page
 *   objects       objects stored (a unit's pieces count one each)
 *   compressed    pages of the units that were compressed (all but the units of same-filled pages)
 *   fallback      units stored page by page because they compressed to the huge class of each
 *                 of their pages or more
 *
 * Instructions come from running it under callgrind: the inclusive counts of compress_unit(),
 * decompress_unit() (a whole unit read back) and read_one_page() (one page of a unit read alone:
 * the unit decompressed into a scratch buffer and the page copied out), each called for every
 * unit holding an object. UNIT 4096 is zram's own page-by-page storage.
 *
 * zstd compresses at level 3 with the parameters the library chooses for the unit's size (C
 * zram's zstd backend sizes them for one page), lz4 with its default acceleration, lzo with
 * lzo1x-1, deflate as C zram's backend (raw deflate, level 6, a window of 2^11 bytes).
 */
#define ZSTD_STATIC_LINKING_ONLY
#include <lz4.h>
#include <lzo/lzo1x.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define PAGE 4096
/* zsmalloc's huge class on x86_64 with 4 KiB pages: objects from this size up take a page. */
#define HUGE_CLASS 3264

enum algo { ZSTD, LZ4, LZO, DEFLATE };

static enum algo algo;
static ZSTD_CCtx *cctx;
static ZSTD_DCtx *dctx;
static unsigned char lzo_work[LZO1X_1_MEM_COMPRESS];

static z_stream zdef, zinf;

/* As C zram's deflate backend: one stream per context, reset for each object. */
static size_t deflate_buf(const unsigned char *src, size_t len, unsigned char *dst, size_t cap)
{
	if (deflateReset(&zdef) != Z_OK)
		exit(2);
	zdef.next_in = (unsigned char *)src;
	zdef.avail_in = len;
	zdef.next_out = dst;
	zdef.avail_out = cap;
	if (deflate(&zdef, Z_FINISH) != Z_STREAM_END)
		exit(2);
	return zdef.total_out;
}

static size_t inflate_buf(const unsigned char *src, size_t len, unsigned char *dst, size_t cap)
{
	if (inflateReset(&zinf) != Z_OK)
		exit(2);
	zinf.next_in = (unsigned char *)src;
	zinf.avail_in = len;
	zinf.next_out = dst;
	zinf.avail_out = cap;
	if (inflate(&zinf, Z_FINISH) != Z_STREAM_END)
		exit(2);
	return zinf.total_out;
}

__attribute__((noinline)) static size_t compress_unit(const unsigned char *src, size_t len,
						      unsigned char *dst, size_t cap)
{
	switch (algo) {
	case ZSTD:
		return ZSTD_compressCCtx(cctx, dst, cap, src, len, 3);
	case LZ4:
		return LZ4_compress_default((const char *)src, (char *)dst, len, cap);
	case LZO: {
		lzo_uint out = cap;

		lzo1x_1_compress(src, len, dst, &out, lzo_work);
		return out;
	}
	case DEFLATE:
		return deflate_buf(src, len, dst, cap);
	}
	return 0;
}

static inline __attribute__((always_inline)) size_t decompress(const unsigned char *src,
								size_t len, unsigned char *dst,
								size_t cap)
{
	switch (algo) {
	case ZSTD:
		return ZSTD_decompressDCtx(dctx, dst, cap, src, len);
	case LZ4:
		return LZ4_decompress_safe((const char *)src, (char *)dst, len, cap);
	case LZO: {
		lzo_uint out = cap;

		lzo1x_decompress_safe(src, len, dst, &out, NULL);
		return out;
	}
	case DEFLATE:
		return inflate_buf(src, len, dst, cap);
	}
	return 0;
}

__attribute__((noinline)) static size_t decompress_unit(const unsigned char *src, size_t len,
							unsigned char *dst, size_t cap)
{
	return decompress(src, len, dst, cap);
}

__attribute__((noinline)) static void read_one_page(const unsigned char *src, size_t len,
						    unsigned char *scratch, size_t unit,
						    unsigned char *page, size_t index)
{
	if (decompress(src, len, scratch, unit) != unit)
		exit(3);
	memcpy(page, scratch + index * PAGE, PAGE);
}

static int same_filled(const unsigned char *p)
{
	const uint64_t *w = (const uint64_t *)p;

	for (size_t i = 1; i < PAGE / 8; i++)
		if (w[i] != w[0])
			return 0;
	return 1;
}

static size_t class_size(size_t len)
{
	if (len >= HUGE_CLASS)
		return PAGE;
	len = (len + 15) & ~(size_t)15;
	return len < 32 ? 32 : len;
}

int main(int argc, char **argv)
{
	size_t unit, n, pages = 0, same = 0, stored = 0, objects = 0, fallback = 0, compressed = 0;
	unsigned char *data, *dst, *back, *scratch, page[PAGE];
	size_t cap, size;
	FILE *f;

	if (argc != 4)
		return fprintf(stderr, "usage: unit-model zstd|lz4|lzo|deflate UNIT FILE\n"), 1;
	algo = !strcmp(argv[1], "zstd") ? ZSTD : !strcmp(argv[1], "lz4") ? LZ4 :
	       !strcmp(argv[1], "lzo") ? LZO : !strcmp(argv[1], "deflate") ? DEFLATE : -1;
	unit = strtoul(argv[2], NULL, 0);
	if ((int)algo < 0 || unit < PAGE || unit % PAGE)
		return fprintf(stderr, "unit-model: bad algorithm or unit\n"), 1;
	n = unit / PAGE;
	f = fopen(argv[3], "rb");
	if (!f || fseek(f, 0, SEEK_END))
		return perror(argv[3]), 1;
	size = ftell(f) / unit * unit;
	rewind(f);
	data = malloc(size ? size : 1);
	cap = 2 * unit + 1024;
	dst = malloc(cap);
	back = malloc(unit);
	scratch = malloc(unit);
	if (!data || !dst || !back || !scratch || fread(data, 1, size, f) != size)
		return fprintf(stderr, "unit-model: cannot read %s\n", argv[3]), 1;
	cctx = ZSTD_createCCtx();
	dctx = ZSTD_createDCtx();
	if (lzo_init() != LZO_E_OK ||
	    deflateInit2(&zdef, 6, Z_DEFLATED, -11, 8, Z_DEFAULT_STRATEGY) != Z_OK ||
	    inflateInit2(&zinf, -11) != Z_OK)
		return 1;
	for (size_t off = 0; off < size; off += unit) {
		const unsigned char *u = data + off;
		size_t same_here = 0, len;

		pages += n;
		for (size_t i = 0; i < n; i++)
			same_here += same_filled(u + i * PAGE);
		same += same_here;
		if (same_here == n)
			continue;
		compressed += n;
		if (n == 1) {
			len = compress_unit(u, PAGE, dst, cap);
			if (decompress_unit(dst, len, back, PAGE) != PAGE || memcmp(back, u, PAGE))
				return fprintf(stderr, "unit-model: round trip failed\n"), 3;
			stored += class_size(len);
			objects++;
			continue;
		}
		len = compress_unit(u, unit, dst, cap);
		if (len == 0 || len >= n * HUGE_CLASS) {
			/* Stored page by page: every page but the same-filled ones, on its own. */
			fallback++;
			for (size_t i = 0; i < n; i++) {
				if (same_filled(u + i * PAGE))
					continue;
				stored += class_size(compress_unit(u + i * PAGE, PAGE, dst, cap));
				objects++;
			}
			continue;
		}
		if (decompress_unit(dst, len, back, unit) != unit || memcmp(back, u, unit))
			return fprintf(stderr, "unit-model: round trip failed\n"), 3;
		read_one_page(dst, len, scratch, unit, page, off / unit % n);
		stored += len / PAGE * PAGE + (len % PAGE ? class_size(len % PAGE) : 0);
		objects += (len + PAGE - 1) / PAGE;
	}
	printf("algorithm=%s unit=%zu pages=%zu same=%zu compressed=%zu stored=%zu objects=%zu "
	       "fallback=%zu\n", argv[1], unit, pages, same, compressed, stored, objects, fallback);
	return 0;
}
