// SPDX-License-Identifier: GPL-2.0
//! The LZO library (`lib/lzo`, `include/linux/lzo.h`): LZO1X-1 compression, plain or with zero
//! runs encoded (lzo-rle), in a caller's [`WorkMem`], and decompression, which needs no state.
//! The compressors do not check the room left in their output, so a destination smaller than
//! the library's worst case is refused before they are called.

use super::{ffi, mem};
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;

/// The work memory of LZO1X-1 compression.
pub(crate) type WorkMem = mem::WorkMem<{ ffi::LZO1X_MEM_COMPRESS }>;

/// The signature `lzo1x_1_compress()` and `lzorle1x_1_compress()` share.
type CompressFn = unsafe extern "C" fn(*const u8, usize, *mut u8, *mut usize, *mut c_void) -> c_int;

/// `lzo1x_1_compress()`: compresses `src` into `dst`; returns the compressed length. `EINVAL`
/// when `dst` is smaller than the worst case for `src` or the library fails.
#[inline(always)]
pub(crate) fn compress(wrkmem: &mut WorkMem, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    compress_with(ffi::lzo1x_1_compress, wrkmem, src, dst)
}

/// `lzorle1x_1_compress()`: as [`compress`], with runs of zeroes encoded (lzo-rle).
#[inline(always)]
pub(crate) fn compress_rle(wrkmem: &mut WorkMem, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    compress_with(ffi::lzorle1x_1_compress, wrkmem, src, dst)
}

/// Calls `compress`, one of the library's two LZO1X-1 compressors.
#[inline(always)]
fn compress_with(
    compress: CompressFn,
    wrkmem: &mut WorkMem,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    if dst.len() < ffi::lzo1x_worst_compress(src.len()) {
        return Err(EINVAL);
    }
    let mut dst_len = dst.len();
    // SAFETY: `compress` is `lzo1x_1_compress` or `lzorle1x_1_compress` (the only callers pass
    // them); `src` is readable for its length, `dst` writable for its length, which holds the
    // library's worst case for `src` (checked above); the work memory has the size the library
    // requires and nothing else uses it (`&mut`).
    let ret = unsafe {
        compress(
            src.as_ptr(),
            src.len(),
            dst.as_mut_ptr(),
            &mut dst_len,
            wrkmem.as_mut_ptr(),
        )
    };
    if ret != 0 {
        return Err(EINVAL);
    }
    Ok(dst_len)
}

/// `lzo1x_decompress_safe()`: decompresses `src` (plain or lzo-rle) into the whole of `dst`.
/// `EIO` when `src` is not valid data or does not decompress to exactly `dst.len()` bytes.
/// Does not sleep.
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Result {
    let mut dst_len = dst.len();
    // SAFETY: `src` is readable and `dst` writable for their lengths; the decoder checks its
    // input and writes at most `dst_len` bytes.
    let ret = unsafe {
        ffi::lzo1x_decompress_safe(src.as_ptr(), src.len(), dst.as_mut_ptr(), &mut dst_len)
    };
    if ret != 0 || dst_len != dst.len() {
        return Err(EIO);
    }
    Ok(())
}
