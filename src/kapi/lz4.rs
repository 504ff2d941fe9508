// SPDX-License-Identifier: GPL-2.0
//! The LZ4 library (`lib/lz4`, `include/linux/lz4.h`): LZ4 compression at an acceleration
//! factor ([`Compressor`]) and LZ4HC compression at a level ([`HcCompressor`]), each in the work
//! memory it owns, and decompression, which needs no state. The library takes lengths as `int`:
//! an input too long for one is refused, never truncated.

use super::ffi;
use super::mem::WorkMem;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// `LZ4_ACCELERATION_DEFAULT`.
pub(crate) const ACCELERATION_DEFAULT: c_int = ffi::LZ4_ACCELERATION_DEFAULT;
/// `LZ4HC_DEFAULT_CLEVEL`.
pub(crate) const HC_DEFAULT_CLEVEL: c_int = ffi::LZ4HC_DEFAULT_CLEVEL;
/// `LZ4HC_MAX_CLEVEL`: the highest level C zram 7.x accepts.
pub(crate) const HC_MAX_CLEVEL: c_int = ffi::LZ4HC_MAX_CLEVEL;

/// An LZ4 compressor: the library's work memory and the acceleration factor.
pub(crate) struct Compressor {
    wrkmem: WorkMem<{ ffi::LZ4_MEM_COMPRESS }>,
    acceleration: c_int,
}

impl Compressor {
    /// A compressor at `acceleration` (the library treats values below 1 as 1).
    pub(crate) fn new(acceleration: c_int) -> Result<Self> {
        Ok(Self {
            wrkmem: WorkMem::new()?,
            acceleration,
        })
    }

    /// `LZ4_compress_fast()`: compresses `src` into `dst`; returns the compressed length.
    /// `EINVAL` when the library fails (output too small, input too long).
    #[inline(always)]
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let src_len = c_int::try_from(src.len()).map_err(|_| EINVAL)?;
        // SAFETY: `src` is readable for `src_len` bytes and `dst` writable for its capacity as
        // passed (the library writes no more); the work memory has the size the library
        // requires and nothing else uses it (`&mut self`).
        let ret = unsafe {
            ffi::LZ4_compress_fast(
                src.as_ptr(),
                dst.as_mut_ptr(),
                src_len,
                capacity(dst),
                self.acceleration,
                self.wrkmem.as_mut_ptr(),
            )
        };
        compressed_len(ret)
    }
}

/// An LZ4HC compressor: the library's work memory and the level.
pub(crate) struct HcCompressor {
    wrkmem: WorkMem<{ ffi::LZ4HC_MEM_COMPRESS }>,
    level: c_int,
}

impl HcCompressor {
    /// A compressor at `level` (the library clamps it to its range).
    pub(crate) fn new(level: c_int) -> Result<Self> {
        Ok(Self {
            wrkmem: WorkMem::new()?,
            level,
        })
    }

    /// `LZ4_compress_HC()`: compresses `src` into `dst`; returns the compressed length.
    /// `EINVAL` when the library fails (output too small, input too long).
    #[inline(always)]
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let src_len = c_int::try_from(src.len()).map_err(|_| EINVAL)?;
        // SAFETY: as in `Compressor::compress`, with LZ4HC's work memory.
        let ret = unsafe {
            ffi::LZ4_compress_HC(
                src.as_ptr(),
                dst.as_mut_ptr(),
                src_len,
                capacity(dst),
                self.level,
                self.wrkmem.as_mut_ptr(),
            )
        };
        compressed_len(ret)
    }
}

/// `LZ4_decompress_safe()`: decompresses `src` (LZ4 or LZ4HC) into the whole of `dst`. `EIO`
/// when `src` is not valid data or does not decompress to exactly `dst.len()` bytes. Does not
/// sleep.
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Result {
    // The decoder counts in `int`s: a `dst` longer than one counts cannot be filled exactly.
    let (Ok(src_len), Ok(dst_len)) = (c_int::try_from(src.len()), c_int::try_from(dst.len()))
    else {
        return Err(EIO);
    };
    // SAFETY: `src` is readable for `src_len` bytes and `dst` writable for `dst_len` bytes; the
    // decoder checks its input and writes no more than that.
    let ret = unsafe { ffi::LZ4_decompress_safe(src.as_ptr(), dst.as_mut_ptr(), src_len, dst_len) };
    // An error is negative, which no length equals.
    if ret != dst_len {
        return Err(EIO);
    }
    Ok(())
}

/// The room in `dst` as the library's `int` (all of it, or as much as an `int` counts).
fn capacity(dst: &[u8]) -> c_int {
    c_int::try_from(dst.len()).unwrap_or(c_int::MAX)
}

/// A compressor's result: the compressed length, or `EINVAL` for 0 (the library's failure).
fn compressed_len(ret: c_int) -> Result<usize> {
    usize::try_from(ret)
        .ok()
        .filter(|&len| len > 0)
        .ok_or(EINVAL)
}
