// SPDX-License-Identifier: GPL-2.0
/*
 * The values of the C layouts and constants that src/kapi/ffi.rs (and src/table.rs)
 * write out by hand, taken from the headers of the kernel being built against. Compiled to
 * assembly only (never linked): Kbuild turns each DEFINE into a Rust constant in c_layout.rs
 * (see Kbuild), and const assertions on the Rust side compare every hand-copied value with
 * it, so a difference fails the build.
 */
#include <linux/blk_types.h>
#include <linux/blkdev.h>
#include <linux/gfp.h>
#include <linux/kernel_read_file.h>
#include <linux/kbuild.h>
#include <linux/lz4.h>
#include <linux/lzo.h>
#include <linux/stddef.h>
#include <linux/version.h>
#include <linux/sw842.h>
#include <linux/zlib.h>
#include <linux/zsmalloc.h>
#include <linux/zstd.h>
#ifdef ZRAM_RS_HAVE_ZRAM_DRV_H
#include "zram_drv.h"
#endif
#include "lock_classes.h"

#define SIZE(sym, type) DEFINE(sym, sizeof(type))
#define OFFSET_T(sym, type, mem) DEFINE(sym, offsetof(type, mem))

void zram_rs_c_layout(void);
void zram_rs_c_layout(void)
{
	DEFINE(PAGE_SHIFT, PAGE_SHIFT);
	DEFINE(ZRAM_RS_LOCK_SLOT, ZRAM_RS_LOCK_SLOT);
	DEFINE(ZRAM_RS_LOCK_STREAM, ZRAM_RS_LOCK_STREAM);
	DEFINE(ZRAM_RS_LOCK_READER, ZRAM_RS_LOCK_READER);

#ifndef ZRAM_RS_ZS_OBJ_RW
	DEFINE(ZS_MM_RO, ZS_MM_RO);
	DEFINE(ZS_MM_WO, ZS_MM_WO);
#endif
	SIZE(ZS_POOL_STATS_SIZE, struct zs_pool_stats);
	OFFSET(ZS_POOL_STATS_PAGES_COMPACTED, zs_pool_stats, pages_compacted);

	SIZE(ZSTD_CUSTOM_MEM_SIZE, zstd_custom_mem);
	OFFSET_T(ZSTD_CUSTOM_MEM_ALLOC, zstd_custom_mem, customAlloc);
	OFFSET_T(ZSTD_CUSTOM_MEM_FREE, zstd_custom_mem, customFree);
	OFFSET_T(ZSTD_CUSTOM_MEM_OPAQUE, zstd_custom_mem, opaque);
	SIZE(LZ4_STREAM_SIZE, LZ4_stream_t);
	SIZE(LZ4_STREAMHC_SIZE, LZ4_streamHC_t);
	SIZE(LZ4_STREAMDECODE_SIZE, LZ4_streamDecode_t);
	DEFINE(READING_POLICY, READING_POLICY);
	SIZE(ZSTD_COMPRESSION_PARAMETERS_SIZE, zstd_compression_parameters);
	OFFSET_T(ZSTD_CP_WINDOW_LOG, zstd_compression_parameters, windowLog);
	OFFSET_T(ZSTD_CP_CHAIN_LOG, zstd_compression_parameters, chainLog);
	OFFSET_T(ZSTD_CP_HASH_LOG, zstd_compression_parameters, hashLog);
	OFFSET_T(ZSTD_CP_SEARCH_LOG, zstd_compression_parameters, searchLog);
	OFFSET_T(ZSTD_CP_MIN_MATCH, zstd_compression_parameters, minMatch);
	OFFSET_T(ZSTD_CP_TARGET_LENGTH, zstd_compression_parameters, targetLength);
	OFFSET_T(ZSTD_CP_STRATEGY, zstd_compression_parameters, strategy);
	SIZE(ZSTD_PARAMETERS_SIZE, zstd_parameters);
	OFFSET_T(ZSTD_P_C_PARAMS, zstd_parameters, cParams);
	OFFSET_T(ZSTD_P_CONTENT_SIZE_FLAG, zstd_parameters, fParams.contentSizeFlag);
	OFFSET_T(ZSTD_P_CHECKSUM_FLAG, zstd_parameters, fParams.checksumFlag);
	OFFSET_T(ZSTD_P_NO_DICT_ID_FLAG, zstd_parameters, fParams.noDictIDFlag);

	SIZE(Z_STREAM_SIZE, struct z_stream_s);
	OFFSET(Z_STREAM_NEXT_IN, z_stream_s, next_in);
	OFFSET(Z_STREAM_AVAIL_IN, z_stream_s, avail_in);
	OFFSET(Z_STREAM_TOTAL_IN, z_stream_s, total_in);
	OFFSET(Z_STREAM_NEXT_OUT, z_stream_s, next_out);
	OFFSET(Z_STREAM_AVAIL_OUT, z_stream_s, avail_out);
	OFFSET(Z_STREAM_TOTAL_OUT, z_stream_s, total_out);
	OFFSET(Z_STREAM_MSG, z_stream_s, msg);
	OFFSET(Z_STREAM_STATE, z_stream_s, state);
	OFFSET(Z_STREAM_WORKSPACE, z_stream_s, workspace);
	OFFSET(Z_STREAM_DATA_TYPE, z_stream_s, data_type);
	OFFSET(Z_STREAM_ADLER, z_stream_s, adler);
	OFFSET(Z_STREAM_RESERVED, z_stream_s, reserved);
	DEFINE(Z_OK, Z_OK);
	DEFINE(Z_STREAM_END, Z_STREAM_END);
	DEFINE(Z_SYNC_FLUSH, Z_SYNC_FLUSH);
	DEFINE(Z_FINISH, Z_FINISH);
	DEFINE(Z_DEFLATED, Z_DEFLATED);
	DEFINE(Z_DEFAULT_COMPRESSION, Z_DEFAULT_COMPRESSION);
	DEFINE(Z_BEST_COMPRESSION, Z_BEST_COMPRESSION);
	DEFINE(Z_DEFAULT_STRATEGY, Z_DEFAULT_STRATEGY);
	DEFINE(MAX_MEM_LEVEL, MAX_MEM_LEVEL);

	DEFINE(LZO1X_MEM_COMPRESS, LZO1X_MEM_COMPRESS);
	DEFINE(LZO1X_WORST_COMPRESS_PAGE, lzo1x_worst_compress(PAGE_SIZE));
	DEFINE(LZ4_MEM_COMPRESS, LZ4_MEM_COMPRESS);
	DEFINE(LZ4HC_MEM_COMPRESS, LZ4HC_MEM_COMPRESS);
	DEFINE(LZ4_ACCELERATION_DEFAULT, LZ4_ACCELERATION_DEFAULT);
	DEFINE(LZ4HC_DEFAULT_CLEVEL, LZ4HC_DEFAULT_CLEVEL);
	DEFINE(LZ4HC_MAX_CLEVEL, LZ4HC_MAX_CLEVEL);
	DEFINE(SW842_MEM_COMPRESS, SW842_MEM_COMPRESS);

	DEFINE(BLK_STS_OK, (__force u8)BLK_STS_OK);
	DEFINE(BLK_STS_NOTSUPP, (__force u8)BLK_STS_NOTSUPP);
	DEFINE(BLK_STS_IOERR, (__force u8)BLK_STS_IOERR);
	DEFINE(BLK_FEAT_STABLE_WRITES, (__force unsigned int)BLK_FEAT_STABLE_WRITES);
	DEFINE(BLK_FEAT_SYNCHRONOUS, (__force unsigned int)BLK_FEAT_SYNCHRONOUS);
	DEFINE(REQ_OP_MASK, REQ_OP_MASK);

	DEFINE(GFP_NOIO_VALUE, (__force unsigned long)GFP_NOIO);
	/* zram_write_page()'s two allocations. */
	DEFINE(GFP_POOL_OBJECT_FAST,
	       (__force unsigned long)(__GFP_KSWAPD_RECLAIM | __GFP_NOWARN | __GFP_HIGHMEM |
				       __GFP_MOVABLE));
	DEFINE(GFP_POOL_OBJECT,
	       (__force unsigned long)(GFP_NOIO | __GFP_HIGHMEM | __GFP_MOVABLE));
	/* 7.x's recompress_slot() allocation. */
	DEFINE(GFP_POOL_OBJECT_QUIET,
	       (__force unsigned long)(GFP_NOIO | __GFP_NOWARN | __GFP_HIGHMEM | __GFP_MOVABLE));

#ifdef ZRAM_RS_HAVE_ZRAM_DRV_H
	/* The slot layout of C zram in this kernel (src/slot.rs). */
	DEFINE(HAVE_ZRAM_DRV_H, 1);
	DEFINE(ZRAM_FLAG_SHIFT, ZRAM_FLAG_SHIFT);
	DEFINE(ZRAM_SAME, ZRAM_SAME);
	DEFINE(ZRAM_HUGE, ZRAM_HUGE);
	DEFINE(ZRAM_IDLE, ZRAM_IDLE);
	DEFINE(ZRAM_WB, ZRAM_WB);
	DEFINE(ZRAM_INCOMPRESSIBLE, ZRAM_INCOMPRESSIBLE);
	DEFINE(ZRAM_COMP_PRIORITY_BIT1, ZRAM_COMP_PRIORITY_BIT1);
	/* The post-processing mark: ZRAM_UNDER_WB until 6.12, ZRAM_PP_SLOT in 7.x. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	DEFINE(ZRAM_PP_MARK, ZRAM_UNDER_WB);
#else
	DEFINE(ZRAM_PP_MARK, ZRAM_PP_SLOT);
#endif
	DEFINE(NR_ZRAM_PAGEFLAGS, __NR_ZRAM_PAGEFLAGS);
	DEFINE(ZRAM_LOGICAL_BLOCK_SIZE, ZRAM_LOGICAL_BLOCK_SIZE);
#else
	/* Unknown here: the Rust side checks these only when HAVE_ZRAM_DRV_H is 1. */
	DEFINE(HAVE_ZRAM_DRV_H, 0);
	DEFINE(ZRAM_FLAG_SHIFT, -1);
	DEFINE(ZRAM_SAME, -1);
	DEFINE(ZRAM_HUGE, -1);
	DEFINE(ZRAM_IDLE, -1);
	DEFINE(ZRAM_WB, -1);
	DEFINE(ZRAM_INCOMPRESSIBLE, -1);
	DEFINE(ZRAM_COMP_PRIORITY_BIT1, -1);
	DEFINE(ZRAM_PP_MARK, -1);
	DEFINE(NR_ZRAM_PAGEFLAGS, -1);
	DEFINE(ZRAM_LOGICAL_BLOCK_SIZE, -1);
#endif
}
