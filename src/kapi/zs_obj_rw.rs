// SPDX-License-Identifier: GPL-2.0
//! zsmalloc's object access where the tree has `zs_obj_read_begin()`/`_end()` and
//! `zs_obj_write()` (7.x, Kbuild's `zram_rs_zs_obj_rw`): a read of an object that spans two
//! pages is copied into a buffer the caller lends, and `zs_malloc()` takes a NUMA node.
//! [`super::zspool`] calls these through `zs_access`; `zs_map.rs` is 6.12's.

use super::ffi::{self, ZsPoolRaw};
use kernel::bindings;

/// A read of an object below a page may need the caller's buffer.
pub(super) const READS_NEED_SCRATCH: bool = true;

/// `zs_malloc()` on any node (`NUMA_NO_NODE`).
///
/// # Safety
///
/// `pool` is a live pool.
pub(super) unsafe fn malloc(pool: *mut ZsPoolRaw, size: usize, gfp: bindings::gfp_t) -> usize {
    // SAFETY: `pool` is live by the caller's guarantee; any node will do.
    unsafe { ffi::zs_malloc(pool, size, gfp, bindings::NUMA_NO_NODE) }
}

/// Copies `data` into the object `handle` of `pool`.
///
/// # Safety
///
/// `handle` is a live object of the live `pool`, of at least `data.len()` bytes.
pub(super) unsafe fn write(pool: *mut ZsPoolRaw, handle: usize, data: &[u8]) {
    // SAFETY: the object is live and large enough (caller's guarantee); zsmalloc copies
    // `data.len()` bytes from `data`, which it only reads.
    unsafe { ffi::zs_obj_write(pool, handle, data.as_ptr().cast(), data.len()) };
}

/// Calls `f` with the `size` bytes of object `handle` of `pool` (see
/// [`super::zspool::ZsPool::read_raw`]): an object below a page may be copied into
/// `scratch`, which must then hold `size` bytes, or the read gives `None`.
///
/// # Safety
///
/// `handle` is a live object of the live `pool`, of `size` bytes, that nobody frees while `f`
/// runs; `f` does not sleep.
#[inline(always)]
pub(super) unsafe fn read<R>(
    pool: *mut ZsPoolRaw,
    handle: usize,
    size: usize,
    scratch: &mut [u8],
    f: impl FnOnce(&[u8]) -> R,
) -> Option<R> {
    // A whole-page object sits alone in one page (zsmalloc's huge class), so zsmalloc never
    // copies it; a smaller one may span two pages and be copied into `scratch`.
    let local_copy = if size >= bindings::PAGE_SIZE {
        core::ptr::null_mut()
    } else if scratch.len() >= size {
        scratch.as_mut_ptr().cast()
    } else {
        return None;
    };
    // SAFETY: the object is live by the caller's guarantee; `local_copy` holds `size` bytes
    // where zsmalloc may need them (above).
    let src = unsafe { ffi::zs_obj_read_begin(pool, handle, size, local_copy) };
    // SAFETY: `src` shows the object's `size` bytes until `zs_obj_read_end()` below, after `f`
    // is done with the slice; `scratch` is not touched meanwhile.
    let result = f(unsafe { core::slice::from_raw_parts(src.cast::<u8>(), size) });
    // SAFETY: ends the read begun above, with the same length and pointer.
    unsafe { ffi::zs_obj_read_end(pool, handle, size, src) };
    Some(result)
}
