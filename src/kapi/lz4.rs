// SPDX-License-Identifier: GPL-2.0
//! The LZ4 library (`lib/lz4`, `include/linux/lz4.h`): LZ4 compression at an acceleration
//! factor ([`Compressor`]) and LZ4HC compression at a level ([`HcCompressor`]), each in the work
//! memory it owns, and decompression, which needs no state; and the same three with a
//! dictionary ([`DictCompressor`], [`DictHcCompressor`], [`DictDecompressor`]), whose streams are
//! primed with it for every page, as C zram does. The library takes lengths as `int`: an input
//! too long for one is refused, never truncated. The LZ4 half is built where the lz4 backend
//! is, the LZ4HC half where lz4hc is.

use super::ffi;
use super::file::FileContents;
use super::mem::WorkMem;
use kernel::ffi::c_int;
use kernel::prelude::*;
use kernel::sync::Arc;

/// `LZ4_ACCELERATION_DEFAULT`.
#[cfg(zram_rs_backend_lz4)]
pub(crate) const ACCELERATION_DEFAULT: c_int = ffi::LZ4_ACCELERATION_DEFAULT;
/// `LZ4HC_DEFAULT_CLEVEL`.
#[cfg(zram_rs_backend_lz4hc)]
pub(crate) const HC_DEFAULT_CLEVEL: c_int = ffi::LZ4HC_DEFAULT_CLEVEL;
/// `LZ4HC_MAX_CLEVEL`: the highest level C zram 7.x accepts.
#[cfg(zram_rs_backend_lz4hc)]
pub(crate) const HC_MAX_CLEVEL: c_int = ffi::LZ4HC_MAX_CLEVEL;

/// An LZ4 compressor: the library's work memory and the acceleration factor.
#[cfg(zram_rs_backend_lz4)]
pub(crate) struct Compressor {
    wrkmem: WorkMem<{ ffi::LZ4_MEM_COMPRESS }>,
    acceleration: c_int,
}

#[cfg(zram_rs_backend_lz4)]
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
#[cfg(zram_rs_backend_lz4hc)]
pub(crate) struct HcCompressor {
    wrkmem: WorkMem<{ ffi::LZ4HC_MEM_COMPRESS }>,
    level: c_int,
}

#[cfg(zram_rs_backend_lz4hc)]
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

/// A dictionary's bytes and their length as the library's `int`.
fn dict_parts(dict: &FileContents) -> Result<(*const u8, c_int)> {
    let bytes = dict.as_slice();
    Ok((
        bytes.as_ptr(),
        c_int::try_from(bytes.len()).map_err(|_| EINVAL)?,
    ))
}

/// An LZ4 compressor with a dictionary: a stream (`LZ4_stream_t`) loaded with the dictionary
/// before each page, as C zram does.
#[cfg(zram_rs_backend_lz4)]
pub(crate) struct DictCompressor {
    stream: WorkMem<{ ffi::LZ4_STREAM_SIZE }>,
    acceleration: c_int,
    dict: Arc<FileContents>,
}

#[cfg(zram_rs_backend_lz4)]
impl DictCompressor {
    /// A compressor at `acceleration` with `dict`.
    pub(crate) fn new(acceleration: c_int, dict: Arc<FileContents>) -> Result<Self> {
        Ok(Self {
            stream: WorkMem::new()?,
            acceleration,
            dict,
        })
    }

    /// `LZ4_loadDict()` into the stream: whether the library took the whole dictionary (it
    /// keeps at most the last 64 KiB, and nothing of one shorter than 8 bytes).
    pub(crate) fn load(&mut self) -> Result<bool> {
        let (dict, dict_len) = dict_parts(&self.dict)?;
        // SAFETY: the stream is `LZ4_stream_t`-sized, zeroed at allocation or as the last load
        // and compression left it (both valid states for the library), and used by this call
        // only (`&mut self`). `dict` is readable for `dict_len` bytes and outlives the
        // stream's use of it (`self.dict`).
        let loaded = unsafe { ffi::LZ4_loadDict(self.stream.as_mut_ptr(), dict, dict_len) };
        Ok(loaded == dict_len)
    }

    /// Loads the dictionary, then `LZ4_compress_fast_continue()`: compresses `src` into `dst`;
    /// returns the compressed length. `EINVAL` when the dictionary is not taken whole (as C
    /// zram 6.12, whose writes then fail) or the library fails.
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        if !self.load()? {
            return Err(EINVAL);
        }
        let src_len = c_int::try_from(src.len()).map_err(|_| EINVAL)?;
        // SAFETY: the stream was loaded just above and is used by this call only; `src` is
        // readable for `src_len` bytes and `dst` writable for its capacity as passed (the
        // library writes no more); the dictionary the stream refers to is alive (`self.dict`).
        let ret = unsafe {
            ffi::LZ4_compress_fast_continue(
                self.stream.as_mut_ptr(),
                src.as_ptr(),
                dst.as_mut_ptr(),
                src_len,
                capacity(dst),
                self.acceleration,
            )
        };
        compressed_len(ret)
    }
}

/// An LZ4HC compressor with a dictionary: a stream (`LZ4_streamHC_t`) reset to the level and
/// loaded with the dictionary before each page, as C zram does.
#[cfg(zram_rs_backend_lz4hc)]
pub(crate) struct DictHcCompressor {
    stream: WorkMem<{ ffi::LZ4_STREAMHC_SIZE }>,
    level: c_int,
    dict: Arc<FileContents>,
}

#[cfg(zram_rs_backend_lz4hc)]
impl DictHcCompressor {
    /// A compressor at `level` with `dict`.
    pub(crate) fn new(level: c_int, dict: Arc<FileContents>) -> Result<Self> {
        Ok(Self {
            stream: WorkMem::new()?,
            level,
            dict,
        })
    }

    /// `LZ4_resetStreamHC()`, `LZ4_loadDictHC()`, then `LZ4_compress_HC_continue()`: compresses
    /// `src` into `dst`; returns the compressed length. `EINVAL` when the dictionary is not
    /// taken whole or the library fails.
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let (dict, dict_len) = dict_parts(&self.dict)?;
        let src_len = c_int::try_from(src.len()).map_err(|_| EINVAL)?;
        let stream = self.stream.as_mut_ptr();
        // SAFETY: the stream is `LZ4_streamHC_t`-sized and used by this call only (`&mut
        // self`); resetting it needs no other precondition.
        unsafe { ffi::LZ4_resetStreamHC(stream, self.level) };
        // SAFETY: the stream was just reset; `dict` is readable for `dict_len` bytes and
        // outlives the stream's use of it (`self.dict`).
        if unsafe { ffi::LZ4_loadDictHC(stream, dict, dict_len) } != dict_len {
            return Err(EINVAL);
        }
        // SAFETY: the stream holds the dictionary just loaded; `src` is readable for `src_len`
        // bytes and `dst` writable for its capacity as passed (the library writes no more).
        let ret = unsafe {
            ffi::LZ4_compress_HC_continue(
                stream,
                src.as_ptr(),
                dst.as_mut_ptr(),
                src_len,
                capacity(dst),
            )
        };
        compressed_len(ret)
    }
}

/// A decompressor of LZ4 or LZ4HC data compressed with a dictionary: a decoding stream
/// (`LZ4_streamDecode_t`) set to the dictionary before each page.
pub(crate) struct DictDecompressor {
    stream: WorkMem<{ ffi::LZ4_STREAMDECODE_SIZE }>,
    dict: Arc<FileContents>,
}

impl DictDecompressor {
    /// A decompressor with `dict`.
    pub(crate) fn new(dict: Arc<FileContents>) -> Result<Self> {
        Ok(Self {
            stream: WorkMem::new()?,
            dict,
        })
    }

    /// `LZ4_setStreamDecode()`, then `LZ4_decompress_safe_continue()`: decompresses `src` into
    /// the whole of `dst`. `EIO` when `src` is not valid data or does not decompress to
    /// exactly `dst.len()` bytes. Does not sleep. Out of line: its registers would otherwise be
    /// saved by every read of a reader without a dictionary too.
    #[inline(never)]
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result {
        let (Ok((dict, dict_len)), Ok(src_len), Ok(dst_len)) = (
            dict_parts(&self.dict),
            c_int::try_from(src.len()),
            c_int::try_from(dst.len()),
        ) else {
            return Err(EIO);
        };
        let stream = self.stream.as_mut_ptr();
        // SAFETY: the stream is `LZ4_streamDecode_t`-sized and used by this call only (`&mut
        // self`); `dict` is readable for `dict_len` bytes and outlives the stream's use of it.
        if unsafe { ffi::LZ4_setStreamDecode(stream, dict, dict_len) } == 0 {
            return Err(EIO);
        }
        // SAFETY: the stream was just set; `src` is readable for `src_len` bytes and `dst`
        // writable for `dst_len` bytes; the decoder checks its input and writes no more.
        let ret = unsafe {
            ffi::LZ4_decompress_safe_continue(
                stream,
                src.as_ptr(),
                dst.as_mut_ptr(),
                src_len,
                dst_len,
            )
        };
        // An error is negative, which no length equals.
        if ret != dst_len {
            return Err(EIO);
        }
        Ok(())
    }
}

/// A reader of LZ4 or LZ4HC data: with a device's dictionary (a [`DictDecompressor`]), or
/// without one ([`decompress`]).
pub(crate) struct Reader(Option<DictDecompressor>);

impl Reader {
    /// A reader with `dict`, if there is one.
    pub(crate) fn new(dict: Option<Arc<FileContents>>) -> Result<Self> {
        Ok(Self(dict.map(DictDecompressor::new).transpose()?))
    }

    /// Decompresses `src` into the whole of `dst`, with the dictionary if there is one. Does not
    /// sleep.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result {
        match &mut self.0 {
            None => decompress(src, dst),
            Some(decompressor) => decompressor.decompress(src, dst),
        }
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
