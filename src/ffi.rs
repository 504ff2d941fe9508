// SPDX-License-Identifier: GPL-2.0
//! Declarations of C that `kernel::bindings` does not expose on 6.12: zsmalloc's exported
//! functions, the functions of `shim.c`, and constants that exist only as C macros. No logic.

// Not every declaration is used on every architecture or configuration.
#![allow(dead_code)]

use kernel::bindings;
use kernel::ffi::{c_char, c_int, c_uint, c_ulong, c_void};

/// Opaque `struct zs_pool`.
#[repr(C)]
pub(crate) struct ZsPoolRaw {
    _opaque: [u8; 0],
}

/// `struct zs_pool_stats` (`include/linux/zsmalloc.h`).
#[repr(C)]
#[derive(Default)]
pub(crate) struct ZsPoolStats {
    /// Number of pages freed by compaction (`atomic_long_t`).
    pub(crate) pages_compacted: isize,
}

/// `enum zs_mapmode`.
pub(crate) const ZS_MM_RO: c_uint = 1;
pub(crate) const ZS_MM_WO: c_uint = 2;

// `struct gendisk` is only passed by pointer; without lockdep it embeds an empty struct, which
// the lint flags.
#[allow(improper_ctypes)]
extern "C" {
    pub(crate) fn zs_create_pool(name: *const c_char) -> *mut ZsPoolRaw;
    pub(crate) fn zs_destroy_pool(pool: *mut ZsPoolRaw);
    pub(crate) fn zs_malloc(pool: *mut ZsPoolRaw, size: usize, flags: bindings::gfp_t) -> c_ulong;
    pub(crate) fn zs_free(pool: *mut ZsPoolRaw, handle: c_ulong);
    pub(crate) fn zs_huge_class_size(pool: *mut ZsPoolRaw) -> usize;
    pub(crate) fn zs_map_object(pool: *mut ZsPoolRaw, handle: c_ulong, mm: c_uint) -> *mut c_void;
    pub(crate) fn zs_unmap_object(pool: *mut ZsPoolRaw, handle: c_ulong);
    pub(crate) fn zs_get_total_pages(pool: *mut ZsPoolRaw) -> c_ulong;
    pub(crate) fn zs_compact(pool: *mut ZsPoolRaw) -> c_ulong;
    pub(crate) fn zs_pool_stats(pool: *mut ZsPoolRaw, stats: *mut ZsPoolStats);

    /// `flush_dcache_page()`: a no-op inline on x86, an exported function on arm64.
    #[cfg(target_arch = "aarch64")]
    pub(crate) fn flush_dcache_page(page: *mut bindings::page);

    // Compression libraries (`include/linux/{lzo,lz4,zstd,zlib,sw842}.h`).
    pub(crate) fn lzo1x_1_compress(
        src: *const u8,
        src_len: usize,
        dst: *mut u8,
        dst_len: *mut usize,
        wrkmem: *mut c_void,
    ) -> c_int;
    pub(crate) fn lzorle1x_1_compress(
        src: *const u8,
        src_len: usize,
        dst: *mut u8,
        dst_len: *mut usize,
        wrkmem: *mut c_void,
    ) -> c_int;
    pub(crate) fn lzo1x_decompress_safe(
        src: *const u8,
        src_len: usize,
        dst: *mut u8,
        dst_len: *mut usize,
    ) -> c_int;
    pub(crate) fn LZ4_compress_fast(
        src: *const u8,
        dst: *mut u8,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
        wrkmem: *mut c_void,
    ) -> c_int;
    pub(crate) fn LZ4_compress_HC(
        src: *const u8,
        dst: *mut u8,
        src_size: c_int,
        dst_capacity: c_int,
        level: c_int,
        wrkmem: *mut c_void,
    ) -> c_int;
    pub(crate) fn LZ4_decompress_safe(
        src: *const u8,
        dst: *mut u8,
        compressed_size: c_int,
        dst_capacity: c_int,
    ) -> c_int;
    pub(crate) fn zstd_default_clevel() -> c_int;
    pub(crate) fn zstd_get_params(level: c_int, estimated_src_size: u64) -> ZstdParameters;
    pub(crate) fn zstd_cctx_workspace_bound(params: *const ZstdCompressionParameters) -> usize;
    pub(crate) fn zstd_init_cctx(workspace: *mut c_void, size: usize) -> *mut c_void;
    pub(crate) fn zstd_compress_cctx(
        cctx: *mut c_void,
        dst: *mut u8,
        dst_capacity: usize,
        src: *const u8,
        src_size: usize,
        params: *const ZstdParameters,
    ) -> usize;
    pub(crate) fn zstd_dctx_workspace_bound() -> usize;
    pub(crate) fn zstd_init_dctx(workspace: *mut c_void, size: usize) -> *mut c_void;
    pub(crate) fn zstd_decompress_dctx(
        dctx: *mut c_void,
        dst: *mut u8,
        dst_capacity: usize,
        src: *const u8,
        src_size: usize,
    ) -> usize;
    pub(crate) fn zstd_is_error(code: usize) -> c_uint;
    pub(crate) fn zlib_deflate_workspacesize(window_bits: c_int, mem_level: c_int) -> c_int;
    pub(crate) fn zlib_deflateInit2(
        strm: *mut ZStream,
        level: c_int,
        method: c_int,
        window_bits: c_int,
        mem_level: c_int,
        strategy: c_int,
    ) -> c_int;
    pub(crate) fn zlib_deflateReset(strm: *mut ZStream) -> c_int;
    pub(crate) fn zlib_deflate(strm: *mut ZStream, flush: c_int) -> c_int;
    pub(crate) fn zlib_deflateEnd(strm: *mut ZStream) -> c_int;
    pub(crate) fn zlib_inflate_workspacesize() -> c_int;
    pub(crate) fn zlib_inflateInit2(strm: *mut ZStream, window_bits: c_int) -> c_int;
    pub(crate) fn zlib_inflateReset(strm: *mut ZStream) -> c_int;
    pub(crate) fn zlib_inflate(strm: *mut ZStream, flush: c_int) -> c_int;
    pub(crate) fn zlib_inflateEnd(strm: *mut ZStream) -> c_int;
    pub(crate) fn sw842_compress(
        src: *const u8,
        src_len: c_uint,
        dst: *mut u8,
        dst_len: *mut c_uint,
        wrkmem: *mut c_void,
    ) -> c_int;
    pub(crate) fn sw842_decompress(
        src: *const u8,
        src_len: c_uint,
        dst: *mut u8,
        dst_len: *mut c_uint,
    ) -> c_int;

    // shim.c
    /// `num_online_cpus()`.
    pub(crate) fn zram_rs_num_online_cpus() -> c_uint;
    /// The `num_devices` module parameter.
    pub(crate) fn zram_rs_num_devices_param() -> c_uint;
    /// `preempt_disable()` / `preempt_enable()` (inline per-CPU operations in C).
    pub(crate) fn zram_rs_preempt_disable();
    pub(crate) fn zram_rs_preempt_enable();
    /// `raw_smp_processor_id()`.
    pub(crate) fn zram_rs_this_cpu() -> c_uint;
    /// `disk_openers()`.
    pub(crate) fn zram_rs_disk_openers(disk: *mut bindings::gendisk) -> c_uint;
    /// `mutex_lock()` / `mutex_unlock()` on `disk->open_mutex` (a macro under lockdep).
    pub(crate) fn zram_rs_lock_open_mutex(disk: *mut bindings::gendisk);
    pub(crate) fn zram_rs_unlock_open_mutex(disk: *mut bindings::gendisk);
}

/// `ZSTD_compressionParameters`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct ZstdCompressionParameters {
    pub(crate) window_log: c_uint,
    pub(crate) chain_log: c_uint,
    pub(crate) hash_log: c_uint,
    pub(crate) search_log: c_uint,
    pub(crate) min_match: c_uint,
    pub(crate) target_length: c_uint,
    pub(crate) strategy: c_int,
}

/// `ZSTD_parameters` (`zstd_parameters`).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct ZstdParameters {
    pub(crate) c_params: ZstdCompressionParameters,
    pub(crate) content_size_flag: c_int,
    pub(crate) checksum_flag: c_int,
    pub(crate) no_dict_id_flag: c_int,
}

/// `struct z_stream_s` (`include/linux/zlib.h`).
#[repr(C)]
pub(crate) struct ZStream {
    pub(crate) next_in: *const u8,
    pub(crate) avail_in: c_ulong,
    pub(crate) total_in: c_ulong,
    pub(crate) next_out: *mut u8,
    pub(crate) avail_out: c_ulong,
    pub(crate) total_out: c_ulong,
    pub(crate) msg: *mut c_char,
    pub(crate) state: *mut c_void,
    pub(crate) workspace: *mut c_void,
    pub(crate) data_type: c_int,
    pub(crate) adler: c_ulong,
    pub(crate) reserved: c_ulong,
}

/// zlib constants (`include/linux/zlib.h`, `zconf.h`).
pub(crate) const Z_OK: c_int = 0;
pub(crate) const Z_STREAM_END: c_int = 1;
pub(crate) const Z_SYNC_FLUSH: c_int = 3;
pub(crate) const Z_FINISH: c_int = 5;
pub(crate) const Z_DEFLATED: c_int = 8;
pub(crate) const Z_DEFAULT_COMPRESSION: c_int = -1;
pub(crate) const Z_DEFAULT_STRATEGY: c_int = 0;
pub(crate) const MAX_MEM_LEVEL: c_int = 8;

/// Work memory sizes and defaults of the other libraries.
pub(crate) const LZO1X_MEM_COMPRESS: usize = 8192 * 2;
pub(crate) const LZ4_MEM_COMPRESS: usize = ((1 << (14 - 3)) + 4) * 8;
pub(crate) const LZ4HC_MEM_COMPRESS: usize = 262192;
pub(crate) const LZ4_ACCELERATION_DEFAULT: c_int = 1;
pub(crate) const LZ4HC_DEFAULT_CLEVEL: c_int = 9;
pub(crate) const SW842_MEM_COMPRESS: usize = 0xf000;

/// `BLK_STS_*` values (macros with casts, not in the bindings).
pub(crate) const BLK_STS_OK: bindings::blk_status_t = 0;
pub(crate) const BLK_STS_NOTSUPP: bindings::blk_status_t = 1;
pub(crate) const BLK_STS_IOERR: bindings::blk_status_t = 10;
/// `BLK_FEAT_*` queue feature bits.
pub(crate) const BLK_FEAT_STABLE_WRITES: bindings::blk_features_t = 1 << 5;
pub(crate) const BLK_FEAT_SYNCHRONOUS: bindings::blk_features_t = 1 << 6;
/// `REQ_OP_MASK`.
pub(crate) const REQ_OP_MASK: bindings::blk_opf_t = (1 << bindings::REQ_OP_BITS) - 1;

const fn gfp_bit(bit: u32) -> bindings::gfp_t {
    1 << bit
}
/// `GFP_NOIO | __GFP_NOWARN | __GFP_HIGHMEM | __GFP_MOVABLE`: what zram allocates pool objects
/// with on the I/O path (may reclaim, never recurses into I/O).
pub(crate) const GFP_POOL_OBJECT: bindings::gfp_t = gfp_bit(bindings::___GFP_DIRECT_RECLAIM_BIT)
    | gfp_bit(bindings::___GFP_KSWAPD_RECLAIM_BIT)
    | gfp_bit(bindings::___GFP_NOWARN_BIT)
    | gfp_bit(bindings::___GFP_HIGHMEM_BIT)
    | gfp_bit(bindings::___GFP_MOVABLE_BIT);
/// The first try for pool objects: no direct reclaim (`__GFP_KSWAPD_RECLAIM | __GFP_NOWARN |
/// __GFP_HIGHMEM | __GFP_MOVABLE`), as C zram's fast path.
pub(crate) const GFP_POOL_OBJECT_FAST: bindings::gfp_t =
    gfp_bit(bindings::___GFP_KSWAPD_RECLAIM_BIT)
        | gfp_bit(bindings::___GFP_NOWARN_BIT)
        | gfp_bit(bindings::___GFP_HIGHMEM_BIT)
        | gfp_bit(bindings::___GFP_MOVABLE_BIT);
/// `GFP_NOIO`: for bounce pages on the I/O path.
pub(crate) const GFP_NOIO: bindings::gfp_t =
    gfp_bit(bindings::___GFP_DIRECT_RECLAIM_BIT) | gfp_bit(bindings::___GFP_KSWAPD_RECLAIM_BIT);

/// `preempt_disable()`. Without `CONFIG_PREEMPT_COUNT` the C macro is only a compiler barrier,
/// which the atomic operation that follows it here already is, so no call is made.
///
/// # Safety
///
/// Must be paired with [`preempt_enable`] on the same thread.
#[inline(always)]
pub(crate) unsafe fn preempt_disable() {
    #[cfg(CONFIG_PREEMPT_COUNT)]
    // SAFETY: `preempt_disable()` has no preconditions; the caller pairs it.
    unsafe {
        zram_rs_preempt_disable()
    };
}

/// `preempt_enable()`; see [`preempt_disable`].
///
/// # Safety
///
/// Undoes one [`preempt_disable`] of the same thread.
#[inline(always)]
pub(crate) unsafe fn preempt_enable() {
    #[cfg(CONFIG_PREEMPT_COUNT)]
    // SAFETY: pairs with an earlier `preempt_disable()` of this thread (caller's promise).
    unsafe {
        zram_rs_preempt_enable()
    };
}

/// The CPU this thread runs on now (`raw_smp_processor_id()`): a hint, it may change at once.
pub(crate) fn this_cpu() -> u32 {
    // SAFETY: reads a per-CPU number; no preconditions.
    unsafe { zram_rs_this_cpu() }
}

/// `num_online_cpus()`.
pub(crate) fn num_online_cpus() -> u32 {
    // SAFETY: reads the online CPU mask's weight; no preconditions.
    unsafe { zram_rs_num_online_cpus() }
}

/// The `num_devices` module parameter (declared in `shim.c`).
pub(crate) fn num_devices_param() -> u32 {
    // SAFETY: reads a module parameter, which the kernel set before the module's init ran.
    unsafe { zram_rs_num_devices_param() }
}

/// `EOPNOTSUPP`, which `kernel::error::code` lacks on 6.12.
pub(crate) fn eopnotsupp() -> kernel::error::Error {
    kernel::error::Error::from_errno(-(bindings::EOPNOTSUPP as i32))
}

/// `IS_ERR_VALUE()`: zs_malloc reports failure as `(unsigned long)ERR_PTR(-errno)`.
pub(crate) fn is_err_value(value: c_ulong) -> bool {
    value >= (bindings::MAX_ERRNO as c_ulong).wrapping_neg()
}

/// Copies `src` into `dst`, both `PAGE_SIZE` bytes, with the architecture's `copy_page()` (what
/// C zram uses for huge pages) when both are page-aligned, a plain copy otherwise. (Of buffers
/// of other lengths, only the shorter length is copied.)
#[inline(always)]
pub(crate) fn copy_page_bytes(dst: &mut [u8], src: &[u8]) {
    let page = bindings::PAGE_SIZE;
    let aligned = (dst.as_ptr() as usize | src.as_ptr() as usize) % page == 0;
    if aligned && dst.len() == page && src.len() == page {
        // SAFETY: both buffers are one whole page of memory, and they do not overlap (`dst` is
        // borrowed mutably).
        unsafe { bindings::copy_page(dst.as_mut_ptr().cast(), src.as_ptr().cast_mut().cast()) };
    } else {
        let len = dst.len().min(src.len());
        dst[..len].copy_from_slice(&src[..len]);
    }
}
