// SPDX-License-Identifier: GPL-2.0
//! zsmalloc's object access where the tree has `zs_map_object()`/`zs_unmap_object()` (6.12):
//! a mapping that disables preemption until released, and `zs_malloc()` without a NUMA node.
//! [`super::zspool`] calls these through `zs_access`; `zs_obj_rw.rs` is the other kernels'.

use super::ffi::{self, ZsPoolRaw};
use kernel::bindings;

/// A read of an object never needs the caller's buffer.
pub(super) const READS_NEED_SCRATCH: bool = false;

/// `zs_malloc()`.
///
/// # Safety
///
/// `pool` is a live pool.
pub(super) unsafe fn malloc(pool: *mut ZsPoolRaw, size: usize, gfp: bindings::gfp_t) -> usize {
    // SAFETY: `pool` is live by the caller's guarantee.
    unsafe { ffi::zs_malloc(pool, size, gfp) }
}

/// Copies `data` into the object `handle` of `pool`.
///
/// # Safety
///
/// `handle` is a live object of the live `pool`, of at least `data.len()` bytes.
pub(super) unsafe fn write(pool: *mut ZsPoolRaw, handle: usize, data: &[u8]) {
    // SAFETY: the object is live (caller's guarantee); the write-only mapping covers its
    // bytes and is released right after the copy.
    let dst = unsafe { ffi::zs_map_object(pool, handle, ffi::ZS_MM_WO) };
    // SAFETY: `dst` is mapped for at least `data.len()` bytes and does not overlap `data`.
    unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), dst.cast::<u8>(), data.len()) };
    // SAFETY: releases the mapping made above; nothing in between could sleep.
    unsafe { ffi::zs_unmap_object(pool, handle) };
}

/// Calls `f` with the `size` bytes of object `handle` of `pool` (see
/// [`super::zspool::ZsPool::read_raw`]); never needs `scratch`.
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
    _scratch: &mut [u8],
    f: impl FnOnce(&[u8]) -> R,
) -> Option<R> {
    // SAFETY: the object is live by the caller's guarantee.
    let src = unsafe { ffi::zs_map_object(pool, handle, ffi::ZS_MM_RO) };
    // SAFETY: the mapping covers the object's `size` bytes and stays valid until
    // `zs_unmap_object()` below, after `f` is done with the slice.
    let result = f(unsafe { core::slice::from_raw_parts(src.cast::<u8>(), size) });
    // SAFETY: releases the mapping made above; `f` could not sleep.
    unsafe { ffi::zs_unmap_object(pool, handle) };
    Some(result)
}
