// SPDX-License-Identifier: GPL-2.0
//! A safe owner of one zsmalloc pool: creation and destruction, allocation of objects as
//! [`ZsHandle`]s, copying data in and out of them through short-lived mappings, and the pool's
//! memory figures.
//!
//! A zsmalloc mapping disables preemption until it is released, so the mappings here live only
//! inside one call and nothing can sleep while one is held.

use crate::ffi;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::prelude::*;
use kernel::str::CStr;

/// An object allocated from a [`ZsPool`].
///
/// # Invariants
///
/// `raw` is a live handle returned by `zs_malloc()` on the pool that made it, not yet freed; the
/// object is `size` bytes long. Only [`ZsPool::alloc`] creates one and only [`ZsPool::free`]
/// consumes one, so a handle can never be freed twice.
#[derive(Debug)]
pub(crate) struct ZsHandle {
    raw: usize,
    size: usize,
}

impl ZsHandle {
    /// The raw handle and size, for storing in the slot table. The object stays allocated: the
    /// caller must turn the pair back into a handle with [`ZsHandle::from_raw`] to free it.
    pub(crate) fn into_raw(self) -> (usize, usize) {
        (self.raw, self.size)
    }

    /// Rebuilds a handle from [`ZsHandle::into_raw`]'s result.
    ///
    /// # Safety
    ///
    /// `(raw, size)` came from `into_raw` on a handle of the pool it will be used with, and no
    /// other `ZsHandle` for it exists.
    pub(crate) unsafe fn from_raw(raw: usize, size: usize) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self { raw, size }
    }

    /// The size the object was allocated with.
    pub(crate) fn size(&self) -> usize {
        self.size
    }
}

/// An owned zsmalloc pool, destroyed on drop.
///
/// # Invariants
///
/// `raw` points to a pool made by `zs_create_pool()` and not yet destroyed.
pub(crate) struct ZsPool {
    raw: NonNull<ffi::ZsPoolRaw>,
}

// SAFETY: zsmalloc pools are used concurrently from any CPU by design; all state is internally
// locked.
unsafe impl Send for ZsPool {}
// SAFETY: as above; every method takes `&self` and zsmalloc serialises internally.
unsafe impl Sync for ZsPool {}

impl ZsPool {
    /// Creates a pool; `name` shows in zsmalloc's debug output.
    pub(crate) fn new(name: &CStr) -> Result<Self> {
        // SAFETY: `name` is a valid NUL-terminated string; zsmalloc copies it.
        let raw = unsafe { ffi::zs_create_pool(name.as_char_ptr()) };
        // INVARIANT: a non-NULL result is a live pool.
        NonNull::new(raw).map(|raw| Self { raw }).ok_or(ENOMEM)
    }

    /// Allocates an object of `size` bytes (1..=PAGE_SIZE) with the GFP mask `gfp`.
    pub(crate) fn alloc(&self, size: usize, gfp: bindings::gfp_t) -> Result<ZsHandle> {
        if size == 0 || size > bindings::PAGE_SIZE {
            return Err(EINVAL);
        }
        // SAFETY: `self.raw` is live by the type invariant.
        let raw = unsafe { ffi::zs_malloc(self.raw.as_ptr(), size, gfp) };
        if ffi::is_err_value(raw) || raw == 0 {
            return Err(ENOMEM);
        }
        // INVARIANT: a fresh, live handle of this pool of `size` bytes.
        Ok(ZsHandle { raw, size })
    }

    /// Frees an object of this pool.
    pub(crate) fn free(&self, handle: ZsHandle) {
        // SAFETY: by `ZsHandle`'s invariant the handle is live and owned (it is consumed here).
        unsafe { ffi::zs_free(self.raw.as_ptr(), handle.raw) };
    }

    /// Copies `data` into the object; `data.len()` must equal the object's size.
    pub(crate) fn write(&self, handle: &ZsHandle, data: &[u8]) {
        let len = data.len().min(handle.size);
        // SAFETY: the handle is live (invariant); a write-only mapping covers the object's
        // `size` bytes and is released before returning. Nothing in between can sleep.
        unsafe {
            let dst = ffi::zs_map_object(self.raw.as_ptr(), handle.raw, ffi::ZS_MM_WO);
            core::ptr::copy_nonoverlapping(data.as_ptr(), dst.cast::<u8>(), len);
            ffi::zs_unmap_object(self.raw.as_ptr(), handle.raw);
        }
    }

    /// Calls `f` with the object's bytes, mapped read-only for the duration of the call only.
    /// `f` must not sleep: preemption is off while the object is mapped.
    ///
    /// # Safety
    ///
    /// `raw`/`size` describe a live object of this pool (what [`ZsHandle::into_raw`] returned)
    /// that nobody frees while `f` runs.
    pub(crate) unsafe fn read_raw<R>(
        &self,
        raw: usize,
        size: usize,
        f: impl FnOnce(&[u8]) -> R,
    ) -> R {
        // SAFETY: the object is live by the caller's guarantee; the mapping covers `size` bytes
        // and stays valid until `zs_unmap_object()` below, after `f` is done with the slice.
        unsafe {
            let src = ffi::zs_map_object(self.raw.as_ptr(), raw, ffi::ZS_MM_RO);
            let result = f(core::slice::from_raw_parts(src.cast::<u8>(), size));
            ffi::zs_unmap_object(self.raw.as_ptr(), raw);
            result
        }
    }

    /// Pages the pool holds from the page allocator.
    pub(crate) fn total_pages(&self) -> u64 {
        // SAFETY: live pool (type invariant).
        unsafe { ffi::zs_get_total_pages(self.raw.as_ptr()) as u64 }
    }

    /// Object size at and above which zsmalloc gives a page a class of its own.
    pub(crate) fn huge_class_size(&self) -> usize {
        // SAFETY: live pool (type invariant).
        unsafe { ffi::zs_huge_class_size(self.raw.as_ptr()) }
    }

    /// Runs compaction; returns the pages it freed.
    pub(crate) fn compact(&self) -> u64 {
        // SAFETY: live pool (type invariant).
        unsafe { ffi::zs_compact(self.raw.as_ptr()) as u64 }
    }

    /// Pages freed by compaction over the pool's life.
    pub(crate) fn pages_compacted(&self) -> u64 {
        let mut stats = ffi::ZsPoolStats::default();
        // SAFETY: live pool (type invariant); `stats` is a valid `struct zs_pool_stats`.
        unsafe { ffi::zs_pool_stats(self.raw.as_ptr(), &mut stats) };
        stats.pages_compacted.max(0) as u64
    }
}

impl Drop for ZsPool {
    fn drop(&mut self) {
        // SAFETY: live pool (type invariant), destroyed once; its owner freed the objects.
        unsafe { ffi::zs_destroy_pool(self.raw.as_ptr()) };
    }
}
