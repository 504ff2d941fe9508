// SPDX-License-Identifier: GPL-2.0
//! A page-sized scratch buffer for the I/O path, allocated with `GFP_NOIO` (an allocation there
//! must never start I/O of its own, since the I/O may be swap) and freed on drop.

use super::ffi;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::prelude::*;

const PAGE_SIZE: usize = bindings::PAGE_SIZE;

/// One page of lowmem.
///
/// # Invariants
///
/// `addr` is the kernel address of an order-0 page from `get_free_pages`, owned by this value.
pub(crate) struct BouncePage {
    addr: NonNull<u8>,
}

impl BouncePage {
    /// Allocates a page; may reclaim, never does I/O.
    pub(crate) fn new() -> Result<Self> {
        let gfp = ffi::GFP_NOIO | bindings::__GFP_NOWARN;
        // SAFETY: plain page allocation; a lowmem page (no `__GFP_HIGHMEM`) has an address.
        let addr = unsafe { bindings::get_free_pages_noprof(gfp, 0) };
        // INVARIANT: non-zero means we own a fresh page at `addr`.
        NonNull::new(addr as *mut u8)
            .map(|addr| Self { addr })
            .ok_or(ENOMEM)
    }

    /// The page's bytes.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: we own `PAGE_SIZE` bytes at `addr` (type invariant), borrowed mutably here.
        unsafe { core::slice::from_raw_parts_mut(self.addr.as_ptr(), PAGE_SIZE) }
    }

    /// The page's bytes, to read.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: we own `PAGE_SIZE` bytes at `addr` (type invariant), borrowed here.
        unsafe { core::slice::from_raw_parts(self.addr.as_ptr(), PAGE_SIZE) }
    }

    /// The page's `struct page`, for a bio of this folder's that the caller waits for while it
    /// borrows the page.
    pub(super) fn raw_page(&self) -> *mut bindings::page {
        // SAFETY: `addr` is a lowmem address of a page we own (type invariant).
        unsafe { ffi::zram_rs_virt_to_page(self.addr.as_ptr().cast()) }
    }
}

// SAFETY: the page is plain memory owned by the value; any thread may use or free it.
unsafe impl Send for BouncePage {}

impl Drop for BouncePage {
    fn drop(&mut self) {
        // SAFETY: the page is ours (type invariant) and freed once.
        unsafe { bindings::free_pages(self.addr.as_ptr() as usize, 0) };
    }
}
