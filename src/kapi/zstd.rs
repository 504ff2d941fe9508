// SPDX-License-Identifier: GPL-2.0
//! The zstd library (`lib/zstd`, `include/linux/zstd.h`): one-shot compression with a
//! [`CompressContext`] and decompression with a [`DecompressContext`], each context built in a
//! workspace it owns, sized by the library's bound; and the library's default level. The
//! library needs no call to free a context: dropping its workspace does.

use super::{ffi, mem};
use core::ptr::NonNull;
use kernel::alloc::VVec;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;

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

/// A decompression context.
///
/// # Invariants
///
/// `dctx` was made by `zstd_init_dctx()` in `_workspace`, which is as large as
/// `zstd_dctx_workspace_bound()` asked for and is never reallocated.
pub(crate) struct DecompressContext {
    dctx: NonNull<c_void>,
    _workspace: VVec<u8>,
}

// SAFETY: as for `CompressContext`.
unsafe impl Send for DecompressContext {}

impl DecompressContext {
    /// A decompression context. `EINVAL` when the library refuses the workspace.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: computes a size; no preconditions.
        let size = unsafe { ffi::zstd_dctx_workspace_bound() };
        let mut workspace = mem::vzalloc(size)?;
        // SAFETY: `workspace` is writable for `size` bytes; the context made in it is stored
        // with it below and does not outlive it.
        let dctx = unsafe { ffi::zstd_init_dctx(workspace.as_mut_ptr().cast(), size) };
        let dctx = NonNull::new(dctx).ok_or(EINVAL)?;
        // INVARIANT: `dctx` lives in `workspace`, sized by the library.
        Ok(Self {
            dctx,
            _workspace: workspace,
        })
    }

    /// `zstd_decompress_dctx()`: decompresses the frame in `src` into the whole of `dst`. `EIO`
    /// when `src` is not a valid frame or does not decompress to exactly `dst.len()` bytes.
    /// Does not sleep.
    #[inline(always)]
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result {
        // SAFETY: the context is initialised (type invariant) and used by this call only
        // (`&mut self`); `src` is readable and `dst` writable for their lengths (the library
        // checks its input and writes no more).
        let ret = unsafe {
            ffi::zstd_decompress_dctx(
                self.dctx.as_ptr(),
                dst.as_mut_ptr(),
                dst.len(),
                src.as_ptr(),
                src.len(),
            )
        };
        // An error is a value near `SIZE_MAX` (a small error number, negated), which no slice
        // length equals: the comparison rejects every error without a call to
        // `zstd_is_error()`.
        if ret != dst.len() {
            return Err(EIO);
        }
        Ok(())
    }
}
