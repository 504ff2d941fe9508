// SPDX-License-Identifier: GPL-2.0
//! The software 842 library (`lib/842`, `include/linux/sw842.h`): compression in a caller's
//! [`WorkMem`], and decompression, which needs no state. The library takes lengths as
//! `unsigned int`: an input too long for one is refused, never truncated.

use super::{ffi, mem};
use kernel::ffi::c_uint;
use kernel::prelude::*;

/// The work memory of 842 compression.
pub(crate) type WorkMem = mem::WorkMem<{ ffi::SW842_MEM_COMPRESS }>;

/// `sw842_compress()`: compresses `src` into `dst`; returns the compressed length. The library's
/// error (`ENOSPC` when `dst` is too small) when it fails; `EINVAL` for an input too long.
#[inline(always)]
pub(crate) fn compress(wrkmem: &mut WorkMem, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let src_len = c_uint::try_from(src.len()).map_err(|_| EINVAL)?;
    let mut dst_len = capacity(dst);
    // SAFETY: `src` is readable for `src_len` bytes and `dst` writable for `dst_len` bytes (the
    // library writes no more); the work memory has the size the library requires and nothing
    // else uses it (`&mut`).
    let ret = unsafe {
        ffi::sw842_compress(
            src.as_ptr(),
            src_len,
            dst.as_mut_ptr(),
            &mut dst_len,
            wrkmem.as_mut_ptr(),
        )
    };
    if ret != 0 {
        return Err(Error::from_errno(ret));
    }
    Ok(dst_len as usize)
}

/// `sw842_decompress()`: decompresses `src` into the whole of `dst`. `EIO` when `src` is not
/// valid data or does not decompress to exactly `dst.len()` bytes. Does not sleep.
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Result {
    let src_len = c_uint::try_from(src.len()).map_err(|_| EIO)?;
    let mut dst_len = capacity(dst);
    let out = dst.as_mut_ptr();
    // SAFETY: `src` is readable for `src_len` bytes and `out` writable for `dst_len` bytes; the
    // decoder checks its input and writes no more than that.
    let ret = unsafe { ffi::sw842_decompress(src.as_ptr(), src_len, out, &mut dst_len) };
    if ret != 0 || dst_len as usize != dst.len() {
        return Err(EIO);
    }
    Ok(())
}

/// The room in `dst` as the library's `unsigned int` (all of it, or as much as one counts).
fn capacity(dst: &[u8]) -> c_uint {
    c_uint::try_from(dst.len()).unwrap_or(c_uint::MAX)
}
