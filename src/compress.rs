// SPDX-License-Identifier: GPL-2.0
//! The kernel's compression libraries behind one safe interface, called directly as C zram
//! does since 6.12 (no crypto API): lzo, lzo-rle, lz4, lz4hc, zstd, deflate and 842. A
//! [`Stream`] owns one algorithm's work memory and a two-page output buffer; a
//! [`StreamPool`] holds one stream per online CPU so that writers compress in parallel, and
//! lends them out without a lock (one atomic exchange), sleeping only while all are busy.
//!
//! An algorithm is offered only when the kernel was built with its library (checked with the
//! kernel's `CONFIG_*` cfgs), so the module never references a missing symbol.

use crate::algorithm::{Algorithm, NO_LEVEL};
use crate::ffi;
use core::cell::UnsafeCell;
use core::ffi::c_int;
use core::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KBox, KVec, VVec};
use kernel::new_condvar;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{CondVar, Mutex};

const PAGE_SIZE: usize = kernel::bindings::PAGE_SIZE;
/// deflate's window, as the crypto API and C zram use it (raw deflate, 2 KiB window).
const DEFLATE_WINDOW_BITS: c_int = -11;

/// Whether the kernel has a compressor and its decompressor library, built in or as modules.
macro_rules! libraries_built {
    ($compress:ident, $decompress:ident) => {
        cfg!(all(
            any($compress, $compress = "m"),
            any($decompress, $decompress = "m")
        ))
    };
}

/// Whether the running kernel has `algorithm`'s library.
pub(crate) fn available(algorithm: Algorithm) -> bool {
    match algorithm {
        Algorithm::LzoRle | Algorithm::Lzo => {
            libraries_built!(CONFIG_LZO_COMPRESS, CONFIG_LZO_DECOMPRESS)
        }
        Algorithm::Lz4 => libraries_built!(CONFIG_LZ4_COMPRESS, CONFIG_LZ4_DECOMPRESS),
        Algorithm::Lz4hc => libraries_built!(CONFIG_LZ4HC_COMPRESS, CONFIG_LZ4_DECOMPRESS),
        Algorithm::Zstd => libraries_built!(CONFIG_ZSTD_COMPRESS, CONFIG_ZSTD_DECOMPRESS),
        Algorithm::Deflate => libraries_built!(CONFIG_ZLIB_DEFLATE, CONFIG_ZLIB_INFLATE),
        Algorithm::Sw842 => libraries_built!(CONFIG_842_COMPRESS, CONFIG_842_DECOMPRESS),
    }
}

/// Per-algorithm state of a stream.
enum Context {
    Lzo {
        rle: bool,
        wrkmem: VVec<u8>,
    },
    Lz4 {
        acceleration: c_int,
        wrkmem: VVec<u8>,
    },
    Lz4hc {
        level: c_int,
        wrkmem: VVec<u8>,
    },
    Zstd(ZstdContext),
    Deflate(DeflateContext),
    Sw842 {
        wrkmem: VVec<u8>,
    },
}

/// # Invariants
///
/// `cctx` and `dctx` were initialised in (and point into) `cctx_mem` and `dctx_mem`, which are
/// never reallocated.
struct ZstdContext {
    params: ffi::ZstdParameters,
    cctx: *mut core::ffi::c_void,
    dctx: *mut core::ffi::c_void,
    _cctx_mem: VVec<u8>,
    _dctx_mem: VVec<u8>,
}

/// # Invariants
///
/// `compress` and `decompress` were set up by `zlib_deflateInit2` / `zlib_inflateInit2` with the
/// workspaces below, which are never reallocated; the boxes keep the streams at fixed addresses
/// (zlib's state points back to its stream).
struct DeflateContext {
    compress: KBox<ffi::ZStream>,
    decompress: KBox<ffi::ZStream>,
    _compress_mem: VVec<u8>,
    _decompress_mem: VVec<u8>,
}

impl Drop for DeflateContext {
    fn drop(&mut self) {
        // SAFETY: both streams were initialised (type invariant) and are ended once; their
        // workspaces are freed only after this, when the fields drop.
        unsafe {
            ffi::zlib_deflateEnd(&mut *self.compress);
            ffi::zlib_inflateEnd(&mut *self.decompress);
        }
    }
}

/// `level`, or the algorithm's `default` when none was asked for.
fn level_or(level: c_int, default: c_int) -> c_int {
    if level == NO_LEVEL {
        default
    } else {
        level
    }
}

fn zeroed_buffer(len: usize) -> Result<VVec<u8>> {
    VVec::from_elem(0u8, len, GFP_KERNEL).map_err(|_| ENOMEM)
}

fn new_zstream() -> Result<KBox<ffi::ZStream>> {
    let stream = ffi::ZStream {
        next_in: core::ptr::null(),
        avail_in: 0,
        total_in: 0,
        next_out: core::ptr::null_mut(),
        avail_out: 0,
        total_out: 0,
        msg: core::ptr::null_mut(),
        state: core::ptr::null_mut(),
        workspace: core::ptr::null_mut(),
        data_type: 0,
        adler: 0,
        reserved: 0,
    };
    KBox::new(stream, GFP_KERNEL).map_err(|_| ENOMEM)
}

impl ZstdContext {
    fn new(level: c_int) -> Result<Self> {
        // SAFETY: plain library calls; the workspaces are sized by the library's bounds and
        // outlive the contexts made in them (they are fields of the result).
        unsafe {
            let level = if level == NO_LEVEL {
                ffi::zstd_default_clevel()
            } else {
                level
            };
            let params = ffi::zstd_get_params(level, PAGE_SIZE as u64);
            let csize = ffi::zstd_cctx_workspace_bound(&params.c_params);
            let mut cctx_mem = zeroed_buffer(csize)?;
            let cctx = ffi::zstd_init_cctx(cctx_mem.as_mut_ptr().cast(), csize);
            let dsize = ffi::zstd_dctx_workspace_bound();
            let mut dctx_mem = zeroed_buffer(dsize)?;
            let dctx = ffi::zstd_init_dctx(dctx_mem.as_mut_ptr().cast(), dsize);
            if cctx.is_null() || dctx.is_null() {
                return Err(EINVAL);
            }
            // INVARIANT: both contexts live in the buffers stored alongside.
            Ok(Self {
                params,
                cctx,
                dctx,
                _cctx_mem: cctx_mem,
                _dctx_mem: dctx_mem,
            })
        }
    }
}

impl DeflateContext {
    fn new(level: c_int) -> Result<Self> {
        let level = level_or(level, ffi::Z_DEFAULT_COMPRESSION);
        let mut compress = new_zstream()?;
        let mut decompress = new_zstream()?;
        // SAFETY: the sizes come from zlib; each stream gets its own zeroed workspace, which is
        // stored with it and outlives it.
        unsafe {
            let size = ffi::zlib_deflate_workspacesize(DEFLATE_WINDOW_BITS, ffi::MAX_MEM_LEVEL);
            let mut compress_mem = zeroed_buffer(usize::try_from(size).map_err(|_| EINVAL)?)?;
            compress.workspace = compress_mem.as_mut_ptr().cast();
            let size = ffi::zlib_inflate_workspacesize();
            let mut decompress_mem = zeroed_buffer(usize::try_from(size).map_err(|_| EINVAL)?)?;
            decompress.workspace = decompress_mem.as_mut_ptr().cast();
            if ffi::zlib_deflateInit2(
                &mut *compress,
                level,
                ffi::Z_DEFLATED,
                DEFLATE_WINDOW_BITS,
                ffi::MAX_MEM_LEVEL,
                ffi::Z_DEFAULT_STRATEGY,
            ) != ffi::Z_OK
            {
                return Err(EINVAL);
            }
            if ffi::zlib_inflateInit2(&mut *decompress, DEFLATE_WINDOW_BITS) != ffi::Z_OK {
                ffi::zlib_deflateEnd(&mut *compress);
                return Err(EINVAL);
            }
            // INVARIANT: both streams are initialised with the workspaces stored alongside.
            Ok(Self {
                compress,
                decompress,
                _compress_mem: compress_mem,
                _decompress_mem: decompress_mem,
            })
        }
    }
}

/// One compression stream: an algorithm's context and a two-page output buffer (room for
/// data that grows when compressed).
pub(crate) struct Stream {
    context: Context,
    buffer: VVec<u8>,
}

// SAFETY: a stream is used by one thread at a time (`&mut self`); the raw pointers inside
// point into buffers the stream owns.
unsafe impl Send for Stream {}

impl Stream {
    /// A stream for `algorithm` at `level` ([`NO_LEVEL`] for the algorithm's default).
    pub(crate) fn new(algorithm: Algorithm, level: i32) -> Result<Self> {
        if !available(algorithm) {
            return Err(EINVAL);
        }
        let context = match algorithm {
            Algorithm::LzoRle | Algorithm::Lzo => Context::Lzo {
                rle: algorithm == Algorithm::LzoRle,
                wrkmem: zeroed_buffer(ffi::LZO1X_MEM_COMPRESS)?,
            },
            Algorithm::Lz4 => Context::Lz4 {
                acceleration: level_or(level, ffi::LZ4_ACCELERATION_DEFAULT),
                wrkmem: zeroed_buffer(ffi::LZ4_MEM_COMPRESS)?,
            },
            Algorithm::Lz4hc => Context::Lz4hc {
                level: level_or(level, ffi::LZ4HC_DEFAULT_CLEVEL),
                wrkmem: zeroed_buffer(ffi::LZ4HC_MEM_COMPRESS)?,
            },
            Algorithm::Zstd => Context::Zstd(ZstdContext::new(level)?),
            Algorithm::Deflate => Context::Deflate(DeflateContext::new(level)?),
            Algorithm::Sw842 => Context::Sw842 {
                wrkmem: zeroed_buffer(ffi::SW842_MEM_COMPRESS)?,
            },
        };
        Ok(Self {
            context,
            buffer: zeroed_buffer(2 * PAGE_SIZE)?,
        })
    }

    /// Compresses `src` (one page); returns the compressed bytes, in the stream's buffer.
    pub(crate) fn compress(&mut self, src: &[u8]) -> Result<&[u8]> {
        let dst = self.buffer.as_mut_ptr();
        let capacity = self.buffer.len();
        let src_len = src.len();
        // SAFETY: `src` is readable for `src_len` bytes, `dst` writable for `capacity` bytes,
        // the work memories have the sizes their libraries require, and the zstd/zlib
        // contexts are initialised (invariants of their types).
        let len: usize = unsafe {
            match &mut self.context {
                Context::Lzo { rle, wrkmem } => {
                    let mut dst_len = capacity;
                    let wrkmem = wrkmem.as_mut_ptr().cast();
                    let ret = if *rle {
                        ffi::lzorle1x_1_compress(src.as_ptr(), src_len, dst, &mut dst_len, wrkmem)
                    } else {
                        ffi::lzo1x_1_compress(src.as_ptr(), src_len, dst, &mut dst_len, wrkmem)
                    };
                    if ret != 0 {
                        return Err(EINVAL);
                    }
                    dst_len
                }
                Context::Lz4 {
                    acceleration,
                    wrkmem,
                } => {
                    let ret = ffi::LZ4_compress_fast(
                        src.as_ptr(),
                        dst,
                        src_len as c_int,
                        capacity as c_int,
                        *acceleration,
                        wrkmem.as_mut_ptr().cast(),
                    );
                    usize::try_from(ret).ok().filter(|&n| n > 0).ok_or(EINVAL)?
                }
                Context::Lz4hc { level, wrkmem } => {
                    let ret = ffi::LZ4_compress_HC(
                        src.as_ptr(),
                        dst,
                        src_len as c_int,
                        capacity as c_int,
                        *level,
                        wrkmem.as_mut_ptr().cast(),
                    );
                    usize::try_from(ret).ok().filter(|&n| n > 0).ok_or(EINVAL)?
                }
                Context::Zstd(zstd) => {
                    let ret = ffi::zstd_compress_cctx(
                        zstd.cctx,
                        dst,
                        capacity,
                        src.as_ptr(),
                        src_len,
                        &zstd.params,
                    );
                    if ffi::zstd_is_error(ret) != 0 {
                        return Err(EINVAL);
                    }
                    ret
                }
                Context::Deflate(deflate) => {
                    let stream = &mut *deflate.compress;
                    if ffi::zlib_deflateReset(stream) != ffi::Z_OK {
                        return Err(EINVAL);
                    }
                    stream.next_in = src.as_ptr();
                    stream.avail_in = src_len;
                    stream.next_out = dst;
                    stream.avail_out = capacity;
                    if ffi::zlib_deflate(stream, ffi::Z_FINISH) != ffi::Z_STREAM_END {
                        return Err(EINVAL);
                    }
                    stream.total_out
                }
                Context::Sw842 { wrkmem } => {
                    let mut dst_len = capacity as u32;
                    let ret = ffi::sw842_compress(
                        src.as_ptr(),
                        src_len as u32,
                        dst,
                        &mut dst_len,
                        wrkmem.as_mut_ptr().cast(),
                    );
                    if ret != 0 {
                        return Err(Error::from_errno(ret));
                    }
                    dst_len as usize
                }
            }
        };
        if len > capacity {
            return Err(EINVAL);
        }
        Ok(&self.buffer[..len])
    }

    /// Decompresses `src` into `dst`, which the result must fill exactly.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result {
        match &mut self.context {
            Context::Zstd(zstd) => {
                // SAFETY: buffers valid for their lengths; `dctx` initialised (invariant).
                let ret = unsafe {
                    ffi::zstd_decompress_dctx(
                        zstd.dctx,
                        dst.as_mut_ptr(),
                        dst.len(),
                        src.as_ptr(),
                        src.len(),
                    )
                };
                // zstd returns an error as a value near `SIZE_MAX` (a small error number,
                // negated), which no slice length equals: comparing with the length rejects
                // every error too, without calling `zstd_is_error()`.
                if ret != dst.len() {
                    return Err(EIO);
                }
                Ok(())
            }
            Context::Deflate(deflate) => {
                let stream = &mut *deflate.decompress;
                // SAFETY: buffers valid for their lengths; the stream is initialised
                // (invariant); `next_in` is only read by zlib.
                unsafe {
                    if ffi::zlib_inflateReset(stream) != ffi::Z_OK {
                        return Err(EIO);
                    }
                    stream.next_in = src.as_ptr();
                    stream.avail_in = src.len();
                    stream.next_out = dst.as_mut_ptr();
                    stream.avail_out = dst.len();
                    if ffi::zlib_inflate(stream, ffi::Z_SYNC_FLUSH) != ffi::Z_STREAM_END
                        || stream.total_out != dst.len()
                    {
                        return Err(EIO);
                    }
                }
                Ok(())
            }
            Context::Lzo { .. } => decompress_stateless(Algorithm::Lzo, src, dst),
            Context::Lz4 { .. } | Context::Lz4hc { .. } => {
                decompress_stateless(Algorithm::Lz4, src, dst)
            }
            Context::Sw842 { .. } => decompress_stateless(Algorithm::Sw842, src, dst),
        }
    }
}

/// Whether `algorithm` decompresses without a stream's context (so a reader need not wait for
/// a stream).
pub(crate) fn decompresses_without_stream(algorithm: Algorithm) -> bool {
    !matches!(algorithm, Algorithm::Zstd | Algorithm::Deflate)
}

/// Decompresses `src` into `dst` (which the result must fill exactly) for an algorithm that
/// needs no context; `EINVAL` for one that does. Does not sleep.
pub(crate) fn decompress_stateless(algorithm: Algorithm, src: &[u8], dst: &mut [u8]) -> Result {
    // SAFETY: `src` readable and `dst` writable for their lengths; these decoders check their
    // input and never write past `dst_len`.
    let produced = unsafe {
        match algorithm {
            Algorithm::LzoRle | Algorithm::Lzo => {
                let mut dst_len = dst.len();
                let ret = ffi::lzo1x_decompress_safe(
                    src.as_ptr(),
                    src.len(),
                    dst.as_mut_ptr(),
                    &mut dst_len,
                );
                if ret != 0 {
                    return Err(EIO);
                }
                dst_len
            }
            Algorithm::Lz4 | Algorithm::Lz4hc => {
                let ret = ffi::LZ4_decompress_safe(
                    src.as_ptr(),
                    dst.as_mut_ptr(),
                    src.len() as c_int,
                    dst.len() as c_int,
                );
                usize::try_from(ret).map_err(|_| EIO)?
            }
            Algorithm::Sw842 => {
                let mut dst_len = dst.len() as u32;
                let ret = ffi::sw842_decompress(
                    src.as_ptr(),
                    src.len() as u32,
                    dst.as_mut_ptr(),
                    &mut dst_len,
                );
                if ret != 0 {
                    return Err(EIO);
                }
                dst_len as usize
            }
            Algorithm::Zstd | Algorithm::Deflate => return Err(EINVAL),
        }
    };
    if produced != dst.len() {
        return Err(EIO);
    }
    Ok(())
}

/// One stream of a pool and whether it is lent out.
struct StreamPlace {
    busy: AtomicBool,
    stream: UnsafeCell<Stream>,
}

/// The streams of one device: one per online CPU at initialisation. A borrower claims a place
/// with one atomic compare-and-exchange, trying its own CPU's place first (as C zram's per-CPU
/// streams), then the others; only when all are lent out does it sleep on `returned`.
///
/// # Invariants
///
/// A place's `stream` is accessed only by the [`StreamGuard`] that set its `busy` flag, until
/// the guard clears it. `sleepers` counts borrowers that registered under `sleep_lock` and may
/// be waiting on `returned`.
#[pin_data]
pub(crate) struct StreamPool {
    places: KVec<StreamPlace>,
    sleepers: AtomicUsize,
    #[pin]
    sleep_lock: Mutex<()>,
    #[pin]
    returned: CondVar,
}

// SAFETY: the streams inside are reached only by the one guard that holds their place (type
// invariant); everything else is atomics and kernel locks.
unsafe impl Sync for StreamPool {}
// SAFETY: the pool owns its streams, which are `Send`.
unsafe impl Send for StreamPool {}

/// A stream borrowed from a [`StreamPool`]; goes back on drop. Dropping may sleep (it wakes a
/// waiting borrower under a mutex), so a guard must not be dropped in atomic context, such as
/// under a slot lock.
///
/// # Invariants
///
/// This guard set `place.busy` and is the only user of `place.stream` until it drops.
pub(crate) struct StreamGuard<'a> {
    pool: &'a StreamPool,
    place: &'a StreamPlace,
}

impl StreamPool {
    /// `count` streams of `algorithm` at `level`.
    pub(crate) fn new(
        algorithm: Algorithm,
        level: i32,
        count: usize,
    ) -> Result<impl PinInit<Self>> {
        let mut places = KVec::with_capacity(count.max(1), GFP_KERNEL)?;
        for _ in 0..count.max(1) {
            places.push(
                StreamPlace {
                    busy: AtomicBool::new(false),
                    stream: UnsafeCell::new(Stream::new(algorithm, level)?),
                },
                GFP_KERNEL,
            )?;
        }
        Ok(pin_init!(Self {
            places,
            sleepers: AtomicUsize::new(0),
            sleep_lock <- new_mutex!((), "StreamPool::sleep_lock"),
            returned <- new_condvar!("StreamPool::returned"),
        }))
    }

    /// Borrows a free stream if there is one, trying the current CPU's first; never sleeps.
    #[inline(always)]
    pub(crate) fn try_get(&self) -> Option<StreamGuard<'_>> {
        let count = self.places.len();
        let first = (ffi::this_cpu() as usize).checked_rem(count)?;
        let (lower, own_and_higher) = self.places.split_at(first);
        Iterator::chain(own_and_higher.iter(), lower).find_map(|place| {
            let free = !place.busy.load(Ordering::Relaxed)
                && place
                    .busy
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok();
            // `then`, not `then_some`: a guard made for a place we did not claim would
            // release it when dropped.
            // INVARIANT: made only when this thread just set `busy`.
            free.then(|| StreamGuard { pool: self, place })
        })
    }

    /// Borrows a stream, sleeping until one is free.
    #[inline(always)]
    pub(crate) fn get(&self) -> StreamGuard<'_> {
        match self.try_get() {
            Some(stream) => stream,
            None => self.get_after_wait(),
        }
    }

    /// [`Self::get`] when every stream is lent out.
    #[inline(never)]
    fn get_after_wait(&self) -> StreamGuard<'_> {
        let mut sleep = self.sleep_lock.lock();
        loop {
            // Register, then look again: a guard that returns its stream after this sees the
            // registration (both sides fence) and wakes us under `sleep_lock`, which we hold
            // until `wait` has queued us.
            self.sleepers.fetch_add(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            let found = self.try_get();
            if found.is_none() {
                self.returned.wait(&mut sleep);
            }
            self.sleepers.fetch_sub(1, Ordering::Relaxed);
            if let Some(stream) = found {
                return stream;
            }
        }
    }
}

impl core::ops::Deref for StreamGuard<'_> {
    type Target = Stream;

    fn deref(&self) -> &Stream {
        // SAFETY: this guard is the stream's only user (type invariant).
        unsafe { &*self.place.stream.get() }
    }
}

impl core::ops::DerefMut for StreamGuard<'_> {
    fn deref_mut(&mut self) -> &mut Stream {
        // SAFETY: this guard is the stream's only user (type invariant), borrowed mutably.
        unsafe { &mut *self.place.stream.get() }
    }
}

impl Drop for StreamGuard<'_> {
    fn drop(&mut self) {
        self.place.busy.store(false, Ordering::Release);
        fence(Ordering::SeqCst);
        if self.pool.sleepers.load(Ordering::Relaxed) > 0 {
            let _sleep = self.pool.sleep_lock.lock();
            self.pool.returned.notify_one();
        }
    }
}
