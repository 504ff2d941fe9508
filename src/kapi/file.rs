// SPDX-License-Identifier: GPL-2.0
//! Files read whole by path (`kernel_read_file_from_path()`, as C zram reads a compression
//! dictionary): [`FileContents`] owns the bytes, in the `vmalloc` memory the kernel read them
//! into, and frees them when dropped.

use super::ffi;
use core::ptr::NonNull;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KVec;
use kernel::bindings;
use kernel::ffi::c_void;
use kernel::prelude::*;
use kernel::str::CStr;

/// A file's contents, never empty.
///
/// # Invariants
///
/// `data` points to `len` bytes (`len > 0`) that `kernel_read_file_from_path()` allocated with
/// `vmalloc` and filled; nothing writes them afterwards, and they are freed only by `drop`.
pub(crate) struct FileContents {
    data: NonNull<u8>,
    // Read only by the backends that take a dictionary (lz4, lz4hc, zstd); the others refuse
    // one, but C reads the file all the same.
    #[cfg_attr(
        not(any(zram_rs_backend_lz4, zram_rs_backend_lz4hc, zram_rs_backend_zstd)),
        allow(dead_code)
    )]
    len: usize,
}

// SAFETY: the bytes are owned by the value, never written after the read, and freed once, from
// any thread (`kvfree`).
unsafe impl Send for FileContents {}
// SAFETY: shared access only reads the bytes.
unsafe impl Sync for FileContents {}

impl FileContents {
    /// Reads the file at `path` whole, as C zram reads a dictionary (`READING_POLICY`, at most
    /// `INT_MAX` bytes). The read's own error otherwise: `ENOENT` for a missing file, `EINVAL`
    /// for an empty one or one that is not a regular file, `EFBIG` for one too large.
    pub(crate) fn read(path: &CStr) -> Result<Self> {
        let mut buf: *mut c_void = core::ptr::null_mut();
        // SAFETY: `path` is NUL-terminated and lives across the call; `buf` is a writable
        // pointer that the function sets to the memory it allocates (it starts NULL, so the
        // function allocates); a NULL `file_size` is allowed.
        let ret = unsafe {
            ffi::kernel_read_file_from_path(
                path.as_char_ptr(),
                0,
                &mut buf,
                i32::MAX as usize,
                core::ptr::null_mut(),
                ffi::READING_POLICY,
            )
        };
        let len = match usize::try_from(ret) {
            Ok(len) => len,
            // An errno: negative and small.
            Err(_) => {
                return Err(Error::from_errno(i32::try_from(ret).unwrap_or(-22)));
            }
        };
        let Some(data) = NonNull::new(buf.cast::<u8>()) else {
            return Err(EINVAL);
        };
        if len == 0 {
            // SAFETY: `data` was allocated by the read and is not used again.
            unsafe { bindings::kvfree(data.as_ptr().cast()) };
            return Err(EINVAL);
        }
        // INVARIANT: the read allocated and filled `len` bytes at `data`.
        Ok(Self { data, len })
    }

    /// [`Self::read`] of the path in `path`'s bytes up to the first NUL, if any (where C's
    /// string would end).
    pub(crate) fn read_path(path: &[u8]) -> Result<Self> {
        let path = path.split(|&b| b == 0).next().unwrap_or_default();
        let mut terminated =
            KVec::with_capacity(path.len().checked_add(1).ok_or(EINVAL)?, GFP_KERNEL)?;
        terminated.extend_from_slice(path, GFP_KERNEL)?;
        terminated.push(0, GFP_KERNEL)?;
        Self::read(CStr::from_bytes_with_nul(&terminated).map_err(|_| EINVAL)?)
    }

    /// The bytes.
    #[cfg_attr(
        not(any(zram_rs_backend_lz4, zram_rs_backend_lz4hc, zram_rs_backend_zstd)),
        allow(dead_code)
    )]
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `data` points to `len` initialised bytes that live as long as `self` and are
        // not written (type invariant).
        unsafe { core::slice::from_raw_parts(self.data.as_ptr(), self.len) }
    }
}

impl Drop for FileContents {
    fn drop(&mut self) {
        // SAFETY: `data` was allocated with `vmalloc` by the read (type invariant) and nothing
        // borrows it once the value is dropped.
        unsafe { bindings::kvfree(self.data.as_ptr().cast()) };
    }
}
