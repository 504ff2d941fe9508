// SPDX-License-Identifier: GPL-2.0
//! Where the bytes of a bio's page are while the driver reads or writes them: the local
//! mapping of `kmap_local_page()`, and its release. Without `CONFIG_HIGHMEM` that mapping is the
//! page's address in the kernel's direct map. On x86_64 with a variable direct map and memmap
//! (`page_offset_base`, `vmemmap_base`: Kbuild's `zram_rs_direct_map_vars`) the address is
//! computed here as the kernel's `page_address()` computes it inline, since C's static inline
//! reaches Rust only as an out-of-line helper (a call and 9 instructions per page, and values
//! spilled around the call on the I/O path); elsewhere the helper is called. [`check`] compares
//! the two once, at load.

use super::bounce::BouncePage;
use kernel::bindings;
use kernel::prelude::*;

/// Maps `page` for the calling thread and returns the address of its first byte.
///
/// # Safety
///
/// `page` is a live page. The mapping is released with [`unmap_local`], in reverse mapping order.
#[inline(always)]
pub(super) unsafe fn map_local(page: *mut bindings::page) -> *mut u8 {
    #[cfg(zram_rs_direct_map_vars)]
    {
        direct_map_address(page)
    }
    #[cfg(not(zram_rs_direct_map_vars))]
    // SAFETY: `page` is live (the caller's promise).
    unsafe {
        bindings::kmap_local_page(page).cast::<u8>()
    }
}

/// `page_address()` of x86_64 without `CONFIG_HIGHMEM`: `__va(PFN_PHYS(page_to_pfn(page)))`,
/// the page's number (its index in the memmap at `vmemmap_base`) times the page size past the
/// direct map's start (`page_offset_base`). Both are set at boot and read-only after it.
#[cfg(zram_rs_direct_map_vars)]
#[inline(always)]
fn direct_map_address(page: *mut bindings::page) -> *mut u8 {
    use kernel::ffi::c_ulong;
    // SAFETY: a plain read of an `__ro_after_init` variable the kernel exports.
    let memmap = unsafe { core::ptr::addr_of!(bindings::vmemmap_base).read() };
    // SAFETY: as above.
    let direct_map = unsafe { core::ptr::addr_of!(bindings::page_offset_base).read() };
    // (In `unsigned long`, as C: `usize` on 7.x, `u64` on 6.12.) No overflow for a page of the
    // memmap (a `struct page` lies at or above `vmemmap_base`, and its direct-map address
    // exists); wrapping for any other pointer, which no caller passes.
    let pfn =
        (page as c_ulong).wrapping_sub(memmap) / core::mem::size_of::<bindings::page>() as c_ulong;
    direct_map.wrapping_add(pfn << bindings::PAGE_SHIFT) as *mut u8
}

/// Whether [`map_local`] of a page is its address in the direct map, which maps physically
/// contiguous pages (a bvec's) at contiguous addresses: without `CONFIG_HIGHMEM`, and without
/// `CONFIG_DEBUG_KMAP_LOCAL_FORCE_MAP`, which maps even direct-mapped pages one at a time.
pub(super) const MAPS_RUNS: bool =
    cfg!(not(any(CONFIG_HIGHMEM, CONFIG_DEBUG_KMAP_LOCAL_FORCE_MAP)));

/// `kunmap_local()` of a page mapped by [`map_local`]. Without `CONFIG_HIGHMEM` pages are never
/// mapped temporarily and `kunmap_local()` does nothing (only parisc, which Rust does not
/// support, flushes there), so the out-of-line helper is not called.
///
/// # Safety
///
/// `base` was returned by [`map_local`] and is unmapped once, in reverse mapping order.
#[inline(always)]
pub(super) unsafe fn unmap_local(base: *mut u8) {
    #[cfg(CONFIG_HIGHMEM)]
    // SAFETY: as the caller guarantees.
    unsafe {
        bindings::kunmap_local(base.cast::<kernel::ffi::c_void>())
    };
    #[cfg(not(CONFIG_HIGHMEM))]
    let _ = base;
}

/// Checks, once at load, that [`map_local`] finds a page where the kernel's `kmap_local_page()`
/// does; refuses to load (`EINVAL`, with a message) if not, rather than read or write the wrong
/// memory.
pub(crate) fn check() -> Result {
    let page = BouncePage::new()?;
    let raw = page.raw_page();
    // SAFETY: `raw` is the live page `page` owns; its mapping is released at once.
    let ours = unsafe { map_local(raw) };
    // SAFETY: as above.
    unsafe { unmap_local(ours) };
    // SAFETY: as above.
    let kernels = unsafe { bindings::kmap_local_page(raw) }.cast::<u8>();
    // SAFETY: `kernels` is this thread's most recent local mapping, released once.
    unsafe { unmap_local(kernels) };
    if ours != kernels || ours.cast_const() != page.bytes().as_ptr() {
        pr_err!("a page's address differs from the kernel's (kmap_local_page); not loading\n");
        return Err(EINVAL);
    }
    Ok(())
}
