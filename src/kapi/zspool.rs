// SPDX-License-Identifier: GPL-2.0
//! A safe owner of one zsmalloc pool: creation and destruction, allocation of objects as
//! [`ZsHandle`]s, copying data in and out of them, and the pool's memory figures.
//!
//! zsmalloc's object access differs between kernels: one module per interface implements it
//! (`zs_map.rs`, 6.12's `zs_map_object`; `zs_obj_rw.rs`, 7.x's `zs_obj_read_begin`/`_end` and
//! `zs_obj_write`), and `kapi/mod.rs` names the tree's as `zs_access`. Either way the views
//! here live only inside one call, and the caller must not sleep in it.

use super::ffi;
use super::zs_access;
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
    pub(crate) fn write(&self, data: &[u8]) {
        let len = data.len().min(self.size);
        // SAFETY: the handle is a live object of the live pool (type invariants) of
        // `size >= len` bytes.
        unsafe { zs_access::write(self.pool.raw.as_ptr(), self.raw, &data[..len]) };
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
    pub(crate) const READS_NEED_SCRATCH: bool = zs_access::READS_NEED_SCRATCH;

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
        // SAFETY: the pool is live by the type invariant.
        let raw = unsafe { zs_access::malloc(self.raw.as_ptr(), size, gfp) };
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
    #[inline(always)]
    pub(crate) unsafe fn read_raw<R>(
        &self,
        raw: usize,
        size: usize,
        scratch: &mut [u8],
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        // SAFETY: a live pool (type invariant) and object (the caller's guarantee, with `f`).
        unsafe { zs_access::read(self.raw.as_ptr(), raw, size, scratch, f) }
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
