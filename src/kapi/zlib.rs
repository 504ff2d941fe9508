// SPDX-License-Identifier: GPL-2.0
//! The zlib library (`lib/zlib_deflate`, `lib/zlib_inflate`, `include/linux/zlib.h`): a
//! [`Deflate`] stream that compresses one whole buffer per call and an [`Inflate`] stream that
//! decompresses one, each owning its `z_stream` (boxed: zlib's state points back to it) and the
//! workspace the library sizes for it, reset before every buffer and ended on drop.

use super::{ffi, mem};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KBox, VVec};
use kernel::prelude::*;

/// `Z_DEFAULT_COMPRESSION`: the level used when none is asked for.
pub(crate) const DEFAULT_COMPRESSION: i32 = ffi::Z_DEFAULT_COMPRESSION;
/// `Z_BEST_COMPRESSION`: the highest level.
pub(crate) const BEST_COMPRESSION: i32 = ffi::Z_BEST_COMPRESSION;

/// A `z_stream` with nothing set but its workspace, which must stay allocated as long as the
/// stream is used.
fn new_stream(workspace: &mut VVec<u8>) -> Result<KBox<ffi::ZStream>> {
    let stream = ffi::ZStream {
        next_in: core::ptr::null(),
        avail_in: 0,
        total_in: 0,
        next_out: core::ptr::null_mut(),
        avail_out: 0,
        total_out: 0,
        msg: core::ptr::null_mut(),
        state: core::ptr::null_mut(),
        workspace: workspace.as_mut_ptr().cast(),
        data_type: 0,
        adler: 0,
        reserved: 0,
    };
    KBox::new(stream, GFP_KERNEL).map_err(|_| ENOMEM)
}

/// Points `stream` at `src` for input and `dst` for output. The pointers are left behind when
/// the call using them returns; every call sets them again before zlib reads them.
fn set_buffers(stream: &mut ffi::ZStream, src: &[u8], dst: &mut [u8]) {
    stream.next_in = src.as_ptr();
    stream.avail_in = src.len();
    stream.next_out = dst.as_mut_ptr();
    stream.avail_out = dst.len();
}

/// A deflate (compression) stream.
///
/// # Invariants
///
/// `stream` was set up by `zlib_deflateInit2()` with `_workspace` as its workspace, sized by
/// `zlib_deflate_workspacesize()` for its parameters; neither moves nor is freed before
/// `zlib_deflateEnd()` in `drop`.
pub(crate) struct Deflate {
    stream: KBox<ffi::ZStream>,
    _workspace: VVec<u8>,
}

// SAFETY: the stream's pointers lead into memory this value owns, or into the buffers of a call
// that has returned (never read again); zlib streams are not tied to a thread.
unsafe impl Send for Deflate {}

impl Deflate {
    /// `zlib_deflateInit2()` at `level` with `window_bits` (negative for raw deflate, without
    /// zlib's header), the largest memory level and the default strategy. `EINVAL` when zlib
    /// refuses the parameters.
    pub(crate) fn new(level: i32, window_bits: i32) -> Result<Self> {
        // SAFETY: computes a size; no preconditions.
        let size = unsafe { ffi::zlib_deflate_workspacesize(window_bits, ffi::MAX_MEM_LEVEL) };
        let mut workspace = mem::vzalloc(usize::try_from(size).map_err(|_| EINVAL)?)?;
        let mut stream = new_stream(&mut workspace)?;
        // SAFETY: `stream` is a fresh `z_stream` at a fixed address whose workspace is sized for
        // these parameters; both are kept together below.
        let ret = unsafe {
            ffi::zlib_deflateInit2(
                &mut *stream,
                level,
                ffi::Z_DEFLATED,
                window_bits,
                ffi::MAX_MEM_LEVEL,
                ffi::Z_DEFAULT_STRATEGY,
            )
        };
        if ret != ffi::Z_OK {
            // Not initialised, so not ended: the box and the workspace are just freed.
            return Err(EINVAL);
        }
        // INVARIANT: initialised with `workspace`, stored alongside.
        Ok(Self {
            stream,
            _workspace: workspace,
        })
    }

    /// Compresses all of `src` into `dst` as one complete stream (`zlib_deflateReset()`, then
    /// `zlib_deflate()` with `Z_FINISH`); returns the compressed length. `EINVAL` when zlib
    /// fails or `dst` is too small.
    #[inline(always)]
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let stream = &mut *self.stream;
        // SAFETY: the stream is initialised (type invariant) and used by this call only.
        if unsafe { ffi::zlib_deflateReset(stream) } != ffi::Z_OK {
            return Err(EINVAL);
        }
        set_buffers(stream, src, dst);
        // SAFETY: the stream is initialised (type invariant); its input and output are `src`
        // and `dst`, valid for the lengths set and borrowed for the whole call; zlib writes no
        // more than `avail_out` and only reads `next_in`.
        if unsafe { ffi::zlib_deflate(stream, ffi::Z_FINISH) } != ffi::Z_STREAM_END {
            return Err(EINVAL);
        }
        Ok(stream.total_out)
    }
}

impl Drop for Deflate {
    fn drop(&mut self) {
        // SAFETY: the stream is initialised (type invariant) and ended once, here; its
        // workspace is freed only after this, when the fields drop.
        unsafe { ffi::zlib_deflateEnd(&mut *self.stream) };
    }
}

/// An inflate (decompression) stream.
///
/// # Invariants
///
/// `stream` was set up by `zlib_inflateInit2()` with `_workspace` as its workspace, sized by
/// `zlib_inflate_workspacesize()`; neither moves nor is freed before `zlib_inflateEnd()` in
/// `drop`.
pub(crate) struct Inflate {
    stream: KBox<ffi::ZStream>,
    _workspace: VVec<u8>,
}

// SAFETY: as for `Deflate`.
unsafe impl Send for Inflate {}

impl Inflate {
    /// `zlib_inflateInit2()` with `window_bits` (negative for raw deflate). `EINVAL` when zlib
    /// refuses it.
    pub(crate) fn new(window_bits: i32) -> Result<Self> {
        // SAFETY: computes a size; no preconditions.
        let size = unsafe { ffi::zlib_inflate_workspacesize() };
        let mut workspace = mem::vzalloc(usize::try_from(size).map_err(|_| EINVAL)?)?;
        let mut stream = new_stream(&mut workspace)?;
        // SAFETY: `stream` is a fresh `z_stream` at a fixed address whose workspace has the
        // size zlib asked for; both are kept together below.
        if unsafe { ffi::zlib_inflateInit2(&mut *stream, window_bits) } != ffi::Z_OK {
            // Not initialised, so not ended: the box and the workspace are just freed.
            return Err(EINVAL);
        }
        // INVARIANT: initialised with `workspace`, stored alongside.
        Ok(Self {
            stream,
            _workspace: workspace,
        })
    }

    /// Decompresses the complete stream in `src` into the whole of `dst` (`zlib_inflateReset()`,
    /// then `zlib_inflate()` with `Z_SYNC_FLUSH`). `EIO` when `src` is not a complete valid
    /// stream or does not decompress to exactly `dst.len()` bytes. Does not sleep.
    #[inline(always)]
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result {
        let stream = &mut *self.stream;
        // SAFETY: the stream is initialised (type invariant) and used by this call only.
        if unsafe { ffi::zlib_inflateReset(stream) } != ffi::Z_OK {
            return Err(EIO);
        }
        set_buffers(stream, src, dst);
        // SAFETY: the stream is initialised (type invariant); its input and output are `src`
        // and `dst`, valid for the lengths set and borrowed for the whole call; zlib checks its
        // input, writes no more than `avail_out` and only reads `next_in`.
        if unsafe { ffi::zlib_inflate(stream, ffi::Z_SYNC_FLUSH) } != ffi::Z_STREAM_END
            || stream.total_out != dst.len()
        {
            return Err(EIO);
        }
        Ok(())
    }
}

impl Drop for Inflate {
    fn drop(&mut self) {
        // SAFETY: the stream is initialised (type invariant) and ended once, here; its
        // workspace is freed only after this, when the fields drop.
        unsafe { ffi::zlib_inflateEnd(&mut *self.stream) };
    }
}
