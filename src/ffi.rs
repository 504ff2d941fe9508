// SPDX-License-Identifier: GPL-2.0
//! Declarations of C that `kernel::bindings` does not expose on 6.12: zsmalloc's exported
//! functions, the functions of `shim.c`, and constants that exist only as C macros. No logic.

// Not every declaration is used on every architecture or configuration.
#![allow(dead_code)]

use kernel::bindings;
use kernel::ffi::{c_char, c_uint, c_ulong, c_void};

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

    // shim.c
    /// The `num_devices` module parameter.
    pub(crate) fn zram_rs_num_devices_param() -> c_uint;
    /// `preempt_disable()` / `preempt_enable()` (inline per-CPU operations in C).
    pub(crate) fn zram_rs_preempt_disable();
    pub(crate) fn zram_rs_preempt_enable();
    /// `disk_openers()`.
    pub(crate) fn zram_rs_disk_openers(disk: *mut bindings::gendisk) -> c_uint;
    /// `mutex_lock()` / `mutex_unlock()` on `disk->open_mutex` (a macro under lockdep).
    pub(crate) fn zram_rs_lock_open_mutex(disk: *mut bindings::gendisk);
    pub(crate) fn zram_rs_unlock_open_mutex(disk: *mut bindings::gendisk);
}

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
/// `GFP_NOIO`: for bounce pages on the I/O path.
pub(crate) const GFP_NOIO: bindings::gfp_t =
    gfp_bit(bindings::___GFP_DIRECT_RECLAIM_BIT) | gfp_bit(bindings::___GFP_KSWAPD_RECLAIM_BIT);

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
