// SPDX-License-Identifier: GPL-2.0
//! A safe owner of one zsmalloc pool: creation and destruction, allocation of objects as
//! [`ZsHandle`]s, copying data in and out of them, and the pool's memory figures.
//!
//! Two zsmalloc interfaces, chosen by the tree built against: `zs_map_object`/`zs_unmap_object`
//! (6.12: a mapping that disables preemption until released), or `zs_obj_read_begin`/`_end`
//! and `zs_obj_write` (`zram_rs_zs_obj_rw`, 7.x: a read of an object that spans two pages is
//! copied into a buffer the caller lends, and `zs_malloc` takes a NUMA node). Either way the
//! views here live only inside one call, and the caller must not sleep in it.

use super::ffi;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::prelude::*;
use kernel::str::CString;

/// An object allocated from a [`ZsPool`], tied to that pool: it carries the pool it came
/// from, so it can only be written to and freed there. Freed on drop.
///
/// # Invariants
///
/// `raw` is a live handle returned by `zs_malloc()` on `pool`, not yet freed, owned by this
/// value; the object is `size` bytes long, `1..=PAGE_SIZE`.
pub(crate) struct ZsHandle<'a> {
    pool: &'a ZsPool,
    raw: usize,
    size: usize,
}

impl<'a> ZsHandle<'a> {
    /// The raw handle and size, for storing in the slot table. The object stays allocated: the
    /// caller must turn the pair back into a handle with [`ZsHandle::from_raw`] to free it.
    pub(crate) fn into_raw(self) -> (usize, usize) {
        let this = core::mem::ManuallyDrop::new(self);
        (this.raw, this.size)
    }

    /// Rebuilds a handle from [`ZsHandle::into_raw`]'s result.
    ///
    /// # Safety
    ///
    /// `(raw, size)` came from `into_raw` on a handle of `pool`, and no other `ZsHandle` for it
    /// exists.
    pub(crate) unsafe fn from_raw(pool: &'a ZsPool, raw: usize, size: usize) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self { pool, raw, size }
    }

    /// Whether the object belongs to `pool`.
    pub(crate) fn belongs_to(&self, pool: &ZsPool) -> bool {
        core::ptr::eq(self.pool, pool)
    }

    /// The raw handle value (as stored in a slot).
    pub(crate) fn raw(&self) -> usize {
        self.raw
    }

    /// The size the object was allocated with.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Copies `data` into the object; only `min(data.len(), size)` bytes are copied.
    #[cfg(not(zram_rs_zs_obj_rw))]
    pub(crate) fn write(&self, data: &[u8]) {
        let pool = self.pool.raw.as_ptr();
        let len = data.len().min(self.size);
        // SAFETY: the handle is a live object of `pool` (type invariant); the write-only
        // mapping covers the object's `size` bytes and is released right after the copy.
        let dst = unsafe { ffi::zs_map_object(pool, self.raw, ffi::ZS_MM_WO) };
        // SAFETY: `dst` is mapped for `size >= len` bytes and does not overlap `data`.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), dst.cast::<u8>(), len) };
        // SAFETY: releases the mapping made above; nothing in between could sleep.
        unsafe { ffi::zs_unmap_object(pool, self.raw) };
    }

    /// Copies `data` into the object; only `min(data.len(), size)` bytes are copied.
    #[cfg(zram_rs_zs_obj_rw)]
    pub(crate) fn write(&self, data: &[u8]) {
        let len = data.len().min(self.size);
        // SAFETY: the handle is a live object of the pool (type invariant) of `size >= len`
        // bytes; zsmalloc copies `len` bytes from `data`, which it only reads.
        unsafe { ffi::zs_obj_write(self.pool.raw.as_ptr(), self.raw, data.as_ptr().cast(), len) };
    }
}

impl Drop for ZsHandle<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is a live object of `pool`, owned by this value (type invariant),
        // which is going away.
        unsafe { ffi::zs_free(self.pool.raw.as_ptr(), self.raw) };
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
    /// Whether a read of an object below a page may need a scratch buffer ([`Self::read_raw`]).
    pub(crate) const READS_NEED_SCRATCH: bool = cfg!(zram_rs_zs_obj_rw);

    /// Creates a pool; `name` shows in zsmalloc's debug output.
    pub(crate) fn new(name: core::fmt::Arguments<'_>) -> Result<Self> {
        let name = CString::try_from_fmt(name)?;
        // SAFETY: `name` is a valid NUL-terminated string; zsmalloc copies it.
        let raw = unsafe { ffi::zs_create_pool(name.as_char_ptr()) };
        // INVARIANT: a non-NULL result is a live pool.
        NonNull::new(raw).map(|raw| Self { raw }).ok_or(ENOMEM)
    }

    /// Allocates an object of `size` bytes (1..=PAGE_SIZE) with the GFP mask `gfp`.
    pub(crate) fn alloc(&self, size: usize, gfp: bindings::gfp_t) -> Result<ZsHandle<'_>> {
        if size == 0 || size > bindings::PAGE_SIZE {
            return Err(EINVAL);
        }
        let pool = self.raw.as_ptr();
        #[cfg(not(zram_rs_zs_obj_rw))]
        // SAFETY: `pool` is live by the type invariant.
        let raw = unsafe { ffi::zs_malloc(pool, size, gfp) };
        #[cfg(zram_rs_zs_obj_rw)]
        // SAFETY: as above; any node will do (`NUMA_NO_NODE`).
        let raw = unsafe { ffi::zs_malloc(pool, size, gfp, bindings::NUMA_NO_NODE) };
        if ffi::is_err_value(raw) || raw == 0 {
            return Err(ENOMEM);
        }
        // INVARIANT: a fresh, live handle of this pool of `size` bytes.
        Ok(ZsHandle {
            pool: self,
            raw,
            size,
        })
    }

    /// Calls `f` with the object's bytes, seen for the duration of the call only. `f` must not
    /// sleep. An object below `PAGE_SIZE` bytes may be copied into `scratch` to be seen whole
    /// (7.x zsmalloc, when it spans two pages), so `scratch` must then hold at least `size`
    /// bytes, or the read gives `None`; a whole-page object never needs it.
    ///
    /// # Safety
    ///
    /// `raw`/`size` describe a live object of this pool (what [`ZsHandle::into_raw`] returned)
    /// that nobody frees while `f` runs.
    #[cfg(not(zram_rs_zs_obj_rw))]
    #[inline(always)]
    pub(crate) unsafe fn read_raw<R>(
        &self,
        raw: usize,
        size: usize,
        _scratch: &mut [u8],
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        // SAFETY: the object is live by the caller's guarantee.
        let src = unsafe { ffi::zs_map_object(self.raw.as_ptr(), raw, ffi::ZS_MM_RO) };
        // SAFETY: the mapping covers the object's `size` bytes and stays valid until
        // `zs_unmap_object()` below, after `f` is done with the slice.
        let result = f(unsafe { core::slice::from_raw_parts(src.cast::<u8>(), size) });
        // SAFETY: releases the mapping made above; `f` could not sleep.
        unsafe { ffi::zs_unmap_object(self.raw.as_ptr(), raw) };
        Some(result)
    }

    /// See the 6.12 variant above.
    ///
    /// # Safety
    ///
    /// As there.
    #[cfg(zram_rs_zs_obj_rw)]
    #[inline(always)]
    pub(crate) unsafe fn read_raw<R>(
        &self,
        raw: usize,
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
        // SAFETY: the object is live by the caller's guarantee; `local_copy` holds `size`
        // bytes where zsmalloc may need them (above).
        let src = unsafe { ffi::zs_obj_read_begin(self.raw.as_ptr(), raw, size, local_copy) };
        // SAFETY: `src` shows the object's `size` bytes until `zs_obj_read_end()` below, after
        // `f` is done with the slice; `scratch` is not touched meanwhile.
        let result = f(unsafe { core::slice::from_raw_parts(src.cast::<u8>(), size) });
        // SAFETY: ends the read begun above, with the same length and pointer.
        unsafe { ffi::zs_obj_read_end(self.raw.as_ptr(), raw, size, src) };
        Some(result)
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

    /// The index of the size class that holds objects of `size` bytes (0 for sizes that do
    /// not fit a `u32`, which no object has).
    pub(crate) fn class_index(&self, size: usize) -> u32 {
        let size = u32::try_from(size).unwrap_or(0);
        // SAFETY: live pool (type invariant); any size is looked up, none is allocated.
        unsafe { ffi::zs_lookup_class_index(self.raw.as_ptr(), size) }
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
