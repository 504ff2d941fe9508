// SPDX-License-Identifier: GPL-2.0
//! The zstd library (`lib/zstd`, `include/linux/zstd.h`): one-shot compression with a
//! [`CompressContext`] and decompression with a [`DecompressContext`], each context built in a
//! workspace it owns, sized by the library's bound; and the library's default level. The
//! library needs no call to free a context so built: dropping its workspace does. With a
//! dictionary (C zram's `dict=`), a [`DigestedDict`] made once per device's algorithm refers to
//! the dictionary's bytes, a [`DictCompressContext`] compresses with it and a
//! [`DecompressContext`] made for it decompresses with it; all live in memory the library asks
//! for through [`CUSTOM_MEM`] and are freed when dropped.

use super::file::FileContents;
use super::{ffi, mem};
use core::ptr::NonNull;
use kernel::alloc::flags::{__GFP_NOWARN, __GFP_ZERO, GFP_KERNEL};
use kernel::alloc::{KVVec, VVec};
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;
use kernel::sync::Arc;

/// `zstd_default_clevel()`: the level used when none is asked for.
pub(crate) fn default_level() -> c_int {
    // SAFETY: returns a constant; no preconditions.
    unsafe { ffi::zstd_default_clevel() }
}

/// `zstd_min_clevel()` and `zstd_max_clevel()`: the levels the library accepts.
pub(crate) fn levels() -> core::ops::RangeInclusive<c_int> {
    // SAFETY: returns a constant; no preconditions.
    let min = unsafe { ffi::zstd_min_clevel() };
    // SAFETY: as above.
    let max = unsafe { ffi::zstd_max_clevel() };
    min..=max
}

/// A compression context and the parameters it compresses with.
///
/// # Invariants
///
/// `cctx` was made by `zstd_init_cctx()` in `_workspace`, which is as large as
/// `zstd_cctx_workspace_bound()` asked for `params` and is never reallocated.
pub(crate) struct CompressContext {
    params: ffi::ZstdParameters,
    cctx: NonNull<c_void>,
    _workspace: VVec<u8>,
}

// SAFETY: the context lives in memory this value owns and is used only through `&mut self`;
// zstd contexts are not tied to a thread.
unsafe impl Send for CompressContext {}

impl CompressContext {
    /// A context compressing at `level` with the parameters `zstd_get_params()` chooses for
    /// inputs of about `estimated_src_size` bytes. `EINVAL` when the library refuses the
    /// workspace.
    pub(crate) fn new(level: c_int, estimated_src_size: u64) -> Result<Self> {
        // SAFETY: computes parameters; no preconditions.
        let params = unsafe { ffi::zstd_get_params(level, estimated_src_size) };
        // SAFETY: `params.c_params` is a parameter set from the library, only read.
        let size = unsafe { ffi::zstd_cctx_workspace_bound(&params.c_params) };
        let mut workspace = mem::vzalloc(size)?;
        // SAFETY: `workspace` is writable for `size` bytes; the context made in it is stored
        // with it below and does not outlive it.
        let cctx = unsafe { ffi::zstd_init_cctx(workspace.as_mut_ptr().cast(), size) };
        let cctx = NonNull::new(cctx).ok_or(EINVAL)?;
        // INVARIANT: `cctx` lives in `workspace`, sized for `params`.
        Ok(Self {
            params,
            cctx,
            _workspace: workspace,
        })
    }

    /// `zstd_compress_cctx()`: compresses `src` into `dst` as one frame; returns the
    /// compressed length. `EINVAL` when the library fails (`dst` too small among others).
    #[inline(always)]
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        // SAFETY: the context is initialised (type invariant) and used by this call only
        // (`&mut self`); `src` is readable and `dst` writable for their lengths (the library
        // writes no more); `params` are the ones the workspace was sized for.
        let ret = unsafe {
            ffi::zstd_compress_cctx(
                self.cctx.as_ptr(),
                dst.as_mut_ptr(),
                dst.len(),
                src.as_ptr(),
                src.len(),
                &self.params,
            )
        };
        // SAFETY: classifies a return value; no preconditions.
        if unsafe { ffi::zstd_is_error(ret) } != 0 {
            return Err(EINVAL);
        }
        Ok(ret)
    }
}

/// A decompression context, with or without the digested dictionary of a [`DigestedDict`].
///
/// # Invariants
///
/// `dctx` is a library context: made by `zstd_init_dctx()` in the workspace `memory` holds
/// ([`DctxMemory::Workspace`]), as large as `zstd_dctx_workspace_bound()` asked for and never
/// reallocated, or by `zstd_create_dctx_advanced()` ([`DctxMemory::Library`]) and freed only
/// by `drop`. `ddict` is null, or the `ddict` of the [`DigestedDict`] `memory` holds.
pub(crate) struct DecompressContext {
    dctx: NonNull<c_void>,
    ddict: *const c_void,
    memory: DctxMemory,
}

/// Where a [`DecompressContext`]'s context lives.
enum DctxMemory {
    /// In this workspace (without a dictionary, as C zram's contexts without one).
    Workspace { _workspace: VVec<u8> },
    /// In memory from [`CUSTOM_MEM`], with the dictionary it decompresses with.
    Library { _dict: Arc<DigestedDict> },
}

// SAFETY: as for `CompressContext`; the digested dictionary is only read, from any thread
// (`DigestedDict` is `Sync`).
unsafe impl Send for DecompressContext {}

impl DecompressContext {
    /// A decompression context without a dictionary. `EINVAL` when the library refuses the
    /// workspace.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: computes a size; no preconditions.
        let size = unsafe { ffi::zstd_dctx_workspace_bound() };
        let mut workspace = mem::vzalloc(size)?;
        // SAFETY: `workspace` is writable for `size` bytes; the context made in it is stored
        // with it below and does not outlive it.
        let dctx = unsafe { ffi::zstd_init_dctx(workspace.as_mut_ptr().cast(), size) };
        let dctx = NonNull::new(dctx).ok_or(EINVAL)?;
        // INVARIANT: `dctx` lives in `workspace`, sized by the library; no dictionary.
        Ok(Self {
            dctx,
            ddict: core::ptr::null(),
            memory: DctxMemory::Workspace {
                _workspace: workspace,
            },
        })
    }

    /// A decompression context for `dict`, made with [`CUSTOM_MEM`] (C zram's with a
    /// dictionary). `EINVAL` when the library fails.
    pub(crate) fn with_dict(dict: Arc<DigestedDict>) -> Result<Self> {
        // SAFETY: makes a context with the allocator above; no other precondition.
        let dctx = unsafe { ffi::zstd_create_dctx_advanced(CUSTOM_MEM) };
        let dctx = NonNull::new(dctx).ok_or(EINVAL)?;
        // INVARIANT: made above; `ddict` is that of the dictionary kept in `memory`.
        Ok(Self {
            dctx,
            ddict: dict.ddict.as_ptr(),
            memory: DctxMemory::Library { _dict: dict },
        })
    }

    /// `zstd_decompress_using_ddict()`: decompresses the frame in `src` into `dst`, with the
    /// context's dictionary or none; returns the library's result, the length decompressed or
    /// an error value (a small error number, negated: above `isize::MAX`, so no slice's length
    /// equals it, and the caller's comparison with the length it expects rejects every error
    /// without a call to `zstd_is_error()`). Allocates nothing (one-shot decompression into a
    /// flat buffer uses the context made at creation) and does not sleep, so it may run under a
    /// slot lock, as reads do.
    ///
    /// One call for both kinds of context: without a dictionary the digested dictionary is
    /// null, which is what the library's `zstd_decompress_dctx()` passes to the same function
    /// for a context that was never given one, so the read takes no branch on the kind.
    #[inline(always)]
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> usize {
        // SAFETY: the context is alive (type invariant) and used by this call only (`&mut
        // self`); the digested dictionary is null or alive (held by `memory`) and only read;
        // `src` is readable and `dst` writable for their lengths (the library checks its input
        // and writes no more).
        unsafe {
            ffi::zstd_decompress_using_ddict(
                self.dctx.as_ptr(),
                dst.as_mut_ptr(),
                dst.len(),
                src.as_ptr(),
                src.len(),
                self.ddict,
            )
        }
    }
}

impl Drop for DecompressContext {
    fn drop(&mut self) {
        if let DctxMemory::Library { .. } = self.memory {
            // SAFETY: made by `zstd_create_dctx_advanced()` and not used again (type
            // invariant); the dictionary it refers to is dropped after it.
            unsafe { ffi::zstd_free_dctx(self.dctx.as_ptr()) };
        }
    }
}

/// The allocator zstd uses for contexts and dictionaries made with a dictionary (C zram's
/// `zstd_custom_mem`). zstd calls it when a context or a digested dictionary is made and when
/// a context first compresses (never to decompress into a flat buffer): from a stream's user,
/// which may be writing a swapped-out page, so its memory comes without I/O (`GFP_NOIO`, as C
/// zram 7.x) and without a warning when there is none (the compression then fails).
pub(crate) const CUSTOM_MEM: ffi::ZstdCustomMem = ffi::ZstdCustomMem {
    custom_alloc,
    custom_free,
    opaque: core::ptr::null_mut(),
};

/// The length, in words, of the header before each block [`custom_alloc`] hands out: the
/// block's capacity in words, for [`custom_free`].
const HEADER_WORDS: usize = 1;

/// `customAlloc`: `size` zeroed bytes, 8-byte aligned, or NULL.
///
/// # Safety
///
/// Called by zstd only, as its allocator.
unsafe extern "C" fn custom_alloc(_opaque: *mut c_void, size: usize) -> *mut c_void {
    let Some(words) = size
        .div_ceil(core::mem::size_of::<u64>())
        .checked_add(HEADER_WORDS)
    else {
        return core::ptr::null_mut();
    };
    let Ok(mut block) =
        mem::noio(|| KVVec::<u64>::with_capacity(words, GFP_KERNEL | __GFP_NOWARN | __GFP_ZERO))
    else {
        return core::ptr::null_mut();
    };
    let capacity = block.capacity();
    let Ok(header) = u64::try_from(capacity) else {
        return core::ptr::null_mut();
    };
    // The header word: pushed within the capacity, so no allocation.
    if block.push(header, GFP_KERNEL).is_err() {
        return core::ptr::null_mut();
    }
    let (base, _len, _capacity) = block.into_raw_parts();
    // SAFETY: the block holds at least `HEADER_WORDS + size / 8` words; the result stays
    // inside it.
    unsafe { base.add(HEADER_WORDS) }.cast()
}

/// `customFree`: frees a block from [`custom_alloc`]; NULL is ignored.
///
/// # Safety
///
/// Called by zstd only, with NULL or a pointer [`custom_alloc`] returned and not yet freed.
unsafe extern "C" fn custom_free(_opaque: *mut c_void, address: *mut c_void) {
    if address.is_null() {
        return;
    }
    // SAFETY: `address` is `HEADER_WORDS` words into a block from `custom_alloc` (caller's
    // promise), so stepping back stays inside it and reaches its header.
    let base = unsafe { address.cast::<u64>().sub(HEADER_WORDS) };
    // SAFETY: the header holds the block's capacity, written by `custom_alloc`.
    let capacity = unsafe { base.read() } as usize;
    // SAFETY: `base` and `capacity` are those of a `KVVec<u64>` that `custom_alloc` gave up with
    // `into_raw_parts`; a length of 0 drops no element; the vector frees the block once.
    drop(unsafe { KVVec::from_raw_parts(base, 0, capacity) });
}

/// A dictionary digested for compression at one level (`zstd_cdict`) and for decompression
/// (`zstd_ddict`), both referring to the dictionary's bytes and in memory from [`CUSTOM_MEM`]:
/// made once for all the streams of a device's algorithm (C's `setup_params`), as only read
/// while compressing and decompressing.
///
/// # Invariants
///
/// `cdict` came from `zstd_create_cdict_byreference()` and `ddict` from
/// `zstd_create_ddict_byreference()` over the bytes of `_dict`, which live as long as `self`;
/// both are freed only by `drop`.
pub(crate) struct DigestedDict {
    cdict: NonNull<c_void>,
    ddict: NonNull<c_void>,
    _dict: Arc<FileContents>,
}

// SAFETY: the digested dictionaries are the value's own and freed once; zstd only reads them
// while compressing or decompressing, so they may be used from several threads at once.
unsafe impl Send for DigestedDict {}
// SAFETY: as above: shared use only reads them.
unsafe impl Sync for DigestedDict {}

impl DigestedDict {
    /// `dict` digested for compression at `level`, with the parameters `zstd_get_cparams()`
    /// chooses for one page and this dictionary (C zram's), and for decompression. `EINVAL`
    /// when the library fails (out of memory among others), `ENOMEM` without memory for the
    /// value.
    pub(crate) fn new(level: c_int, dict: Arc<FileContents>) -> Result<Arc<Self>> {
        let bytes = dict.as_slice();
        let page = kernel::page::PAGE_SIZE as u64;
        // SAFETY: computes parameters; no preconditions.
        let cparams = unsafe { ffi::zstd_get_cparams(level, page, bytes.len()) };
        // SAFETY: `bytes` is readable for its length and outlives the digested dictionary,
        // which refers to it (`dict` is kept with it below).
        let cdict = unsafe {
            ffi::zstd_create_cdict_byreference(
                bytes.as_ptr().cast(),
                bytes.len(),
                cparams,
                CUSTOM_MEM,
            )
        };
        let cdict = NonNull::new(cdict).ok_or(EINVAL)?;
        // SAFETY: as above, for decompression.
        let ddict = unsafe {
            ffi::zstd_create_ddict_byreference(bytes.as_ptr().cast(), bytes.len(), CUSTOM_MEM)
        };
        let Some(ddict) = NonNull::new(ddict) else {
            // SAFETY: `cdict` was made above and is not used again.
            unsafe { ffi::zstd_free_cdict(cdict.as_ptr()) };
            return Err(EINVAL);
        };
        // INVARIANT: both made above, over `dict`'s bytes; if the allocation below fails, the
        // value is dropped, which frees them.
        Ok(Arc::new(
            Self {
                cdict,
                ddict,
                _dict: dict,
            },
            GFP_KERNEL,
        )?)
    }
}

impl Drop for DigestedDict {
    fn drop(&mut self) {
        // SAFETY: both were made by the library and no context uses them any more (each
        // context holds the `Arc` while it uses them) (type invariant).
        unsafe { ffi::zstd_free_cdict(self.cdict.as_ptr()) };
        // SAFETY: as above.
        unsafe { ffi::zstd_free_ddict(self.ddict.as_ptr()) };
    }
}

/// A compression context for a [`DigestedDict`], made with [`CUSTOM_MEM`].
///
/// # Invariants
///
/// `cctx` came from `zstd_create_cctx_advanced()` and is freed only by `drop`.
pub(crate) struct DictCompressContext {
    cctx: NonNull<c_void>,
    dict: Arc<DigestedDict>,
}

// SAFETY: the context is the value's own, used only through `&mut self`; zstd contexts are not
// tied to a thread; the digested dictionary is `Sync`.
unsafe impl Send for DictCompressContext {}

impl DictCompressContext {
    /// A context compressing with `dict`. `EINVAL` when the library fails.
    pub(crate) fn new(dict: Arc<DigestedDict>) -> Result<Self> {
        // SAFETY: makes a context with the allocator above; no other precondition.
        let cctx = unsafe { ffi::zstd_create_cctx_advanced(CUSTOM_MEM) };
        let cctx = NonNull::new(cctx).ok_or(EINVAL)?;
        // INVARIANT: made above.
        Ok(Self { cctx, dict })
    }

    /// The digested dictionary, for the device's other contexts.
    pub(crate) fn dict(&self) -> &Arc<DigestedDict> {
        &self.dict
    }

    /// `zstd_compress_using_cdict()`: compresses `src` into `dst` as one frame; returns the
    /// compressed length. `EINVAL` when the library fails (`dst` too small, out of memory: the
    /// first compression allocates the context's work memory, so it must not run in atomic
    /// context, and no compression does).
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        // SAFETY: the context is alive (type invariant) and used by this call only (`&mut
        // self`); the digested dictionary is alive (`self.dict`) and only read; `src` is
        // readable and `dst` writable for their lengths (the library writes no more).
        let ret = unsafe {
            ffi::zstd_compress_using_cdict(
                self.cctx.as_ptr(),
                dst.as_mut_ptr(),
                dst.len(),
                src.as_ptr(),
                src.len(),
                self.dict.cdict.as_ptr(),
            )
        };
        // SAFETY: classifies a return value; no preconditions.
        if unsafe { ffi::zstd_is_error(ret) } != 0 {
            return Err(EINVAL);
        }
        Ok(ret)
    }
}

impl Drop for DictCompressContext {
    fn drop(&mut self) {
        // SAFETY: made by the library and not used again (type invariant).
        unsafe { ffi::zstd_free_cctx(self.cctx.as_ptr()) };
    }
}
