// SPDX-License-Identifier: GPL-2.0
//! Pages, buffers and allocation flags: whole-page copies with the architecture's
//! `copy_page()`, the cache flush after the CPU wrote a page user space may map, the GFP masks of
//! the I/O path (and a scope in which every allocation is `GFP_NOIO`), and the zeroed `vmalloc`
//! buffers of the compression streams and libraries.

use super::ffi;
use core::sync::atomic::AtomicUsize;
use kernel::alloc::flags::{__GFP_NOWARN, __GFP_ZERO, GFP_KERNEL};
use kernel::alloc::{Flags, VVec};
use kernel::bindings;
use kernel::prelude::*;

pub(crate) use ffi::{GFP_POOL_OBJECT, GFP_POOL_OBJECT_FAST, GFP_POOL_OBJECT_QUIET};

/// The GFP mask of a pool allocation ([`super::zspool::ZsPool::alloc`]).
pub(crate) type PoolGfp = bindings::gfp_t;

/// `flush_dcache_page()`: after the CPU wrote to a page that may be mapped to user space (a
/// read's destination), as C zram does after every read. Nothing on x86_64, where the C
/// function is empty (`shim.c` checks that at build time); a direct call of the exported
/// function on arm64; the shim elsewhere.
///
/// # Safety
///
/// `page` is a live page.
#[inline(always)]
pub(crate) unsafe fn flush_dcache_page(page: *mut bindings::page) {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: the caller passes a live page.
    unsafe {
        ffi::arch_flush_dcache_page(page)
    };
    #[cfg(not(any(target_arch = "aarch64", target_arch = "x86_64")))]
    // SAFETY: the caller passes a live page.
    unsafe {
        ffi::zram_rs_flush_dcache_page(page)
    };
    #[cfg(target_arch = "x86_64")]
    let _ = page;
}

/// Copies `src` into `dst`, both `PAGE_SIZE` bytes, with the architecture's `copy_page()` (what
/// C zram uses for huge pages) when both are page-aligned, a plain copy otherwise. (Of buffers
/// of other lengths, only the shorter length is copied.)
#[inline(always)]
pub(crate) fn copy_page_bytes(dst: &mut [u8], src: &[u8]) {
    let page = bindings::PAGE_SIZE;
    // (A mask, not `%`: the page size is a power of two, and newer clippy would ask for
    // `is_multiple_of`, which Debian 13's rustc 1.85 lacks.)
    let aligned = (dst.as_ptr() as usize | src.as_ptr() as usize) & (page - 1) == 0;
    if aligned && dst.len() == page && src.len() == page {
        // SAFETY: both buffers are one whole page of memory, and they do not overlap (`dst` is
        // borrowed mutably).
        unsafe { bindings::copy_page(dst.as_mut_ptr().cast(), src.as_ptr().cast_mut().cast()) };
    } else {
        let len = dst.len().min(src.len());
        dst[..len].copy_from_slice(&src[..len]);
    }
}

/// A `VVec` of `len` elements whose bytes are all zero, allocated with `flags` (and
/// `__GFP_ZERO`).
///
/// # Safety
///
/// All-zero bytes must be a valid `T`.
pub(crate) unsafe fn zeroed_vvec<T>(len: usize, flags: Flags) -> Result<VVec<T>> {
    let mut vec = VVec::<T>::with_capacity(len, flags | __GFP_ZERO).map_err(|_| ENOMEM)?;
    #[cfg(not(zram_rs_vec_inc_len))]
    // SAFETY: the capacity is `len` and the memory was allocated zeroed, which is a valid `T`
    // (caller's promise).
    unsafe {
        vec.set_len(len)
    };
    #[cfg(zram_rs_vec_inc_len)]
    // SAFETY: as above (7.x names it `inc_len`: the length grows from 0 by `len`).
    unsafe {
        vec.inc_len(len)
    };
    Ok(vec)
}

/// `len` zeroed atomic words from `vmalloc` (C's `kvzalloc()` of a bitmap); `ENOMEM` when out
/// of memory.
pub(crate) fn zeroed_words(len: usize) -> Result<VVec<AtomicUsize>> {
    // SAFETY: an all-zero `AtomicUsize` is a valid 0.
    unsafe { zeroed_vvec::<AtomicUsize>(len, GFP_KERNEL | __GFP_NOWARN) }
}

/// A zeroed buffer of `len` bytes from `vmalloc` (C's `vzalloc()`); `ENOMEM` when out of memory.
pub(crate) fn vzalloc(len: usize) -> Result<VVec<u8>> {
    VVec::from_elem(0u8, len, GFP_KERNEL).map_err(|_| ENOMEM)
}

/// The work memory a C library asks its caller for: `LEN` zeroed bytes from `vmalloc` (so
/// page-aligned, enough for any alignment the libraries need), at a fixed address until drop
/// (for lzo, lz4, lz4hc and 842, where one of them is built).
///
/// # Invariants
///
/// `mem` is `LEN` bytes long and never reallocated.
#[cfg(any(
    zram_rs_backend_lzo,
    zram_rs_backend_lz4,
    zram_rs_backend_lz4hc,
    zram_rs_backend_842
))]
pub(crate) struct WorkMem<const LEN: usize> {
    mem: VVec<u8>,
}

#[cfg(any(
    zram_rs_backend_lzo,
    zram_rs_backend_lz4,
    zram_rs_backend_lz4hc,
    zram_rs_backend_842
))]
impl<const LEN: usize> WorkMem<LEN> {
    /// Allocates the work memory.
    pub(crate) fn new() -> Result<Self> {
        // INVARIANT: `LEN` bytes, and nothing here grows or shrinks them.
        Ok(Self { mem: vzalloc(LEN)? })
    }

    /// The work memory's address, for the library: `LEN` writable bytes, owned by `self`.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut kernel::ffi::c_void {
        self.mem.as_mut_ptr().cast()
    }
}

/// Runs `f` with every allocation of this thread made as with `GFP_NOIO` (the I/O path, where
/// an allocation must not start I/O: `memalloc_noio_save()`).
pub(crate) fn noio<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: no precondition; restored below, on this thread.
    let flags = unsafe { ffi::zram_rs_noio_save() };
    let result = f();
    // SAFETY: the value the save above returned, restored once, in order.
    unsafe { ffi::zram_rs_noio_restore(flags) };
    result
}
