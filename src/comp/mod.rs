// SPDX-License-Identifier: GPL-2.0
//! The compression layer, as C zram's `zcomp`: the [`Backend`] trait that each algorithm
//! implements in a `backend_*.rs` file of its own (over the library wrappers of `kapi`), the
//! parameters a backend takes ([`Params`]), and the table of backends that defines
//! [`Algorithm`] and dispatches to them. Beside it: the streams that compress pages
//! (`stream.rs`), the decompression contexts that read them (`reader.rs`), the pool that lends
//! either (`pool.rs`), an algorithm's streams and contexts together (`codec.rs`), algorithm
//! names and the `algorithm_params` request (`algorithm.rs`, pure logic), and a device's choice
//! of algorithms by priority with the recompression algorithms' codecs (`choice.rs`).
//!
//! Dispatch is static: the table generates a `match` over the backends for each operation, so
//! a page costs no indirect call and no allocation. Adding an algorithm takes a backend file
//! (and its `mod` line) and one entry in the table. A backend is compiled in only where the
//! kernel offers its algorithm (`Kbuild`'s `zram_rs_backend_*` cfgs: C zram's
//! `CONFIG_ZRAM_BACKEND_*` where C zram is configured, else the kernel's libraries), so that
//! the module links only the libraries the kernel has and lists what C zram lists.

// Pure logic shared with the host crate (`host/`), whose tests need its items public.
#[allow(unreachable_pub)]
pub(crate) mod algorithm;
#[cfg(zram_rs_backend_842)]
mod backend_842;
#[cfg(zram_rs_backend_deflate)]
mod backend_deflate;
#[cfg(zram_rs_backend_lz4)]
mod backend_lz4;
#[cfg(zram_rs_backend_lz4hc)]
mod backend_lz4hc;
#[cfg(zram_rs_backend_lzo)]
mod backend_lzo;
#[cfg(zram_rs_backend_zstd)]
mod backend_zstd;
pub(crate) mod choice;
mod codec;
mod pool;
mod reader;
mod stream;

use crate::abi::Abi;
use crate::comp::algorithm::{Named, MAX_BACKEND_KEYS, NO_LEVEL};
use crate::kapi::file::FileContents;
use crate::kapi::zspool::ZsPool;
use crate::Kernel;
pub(crate) use codec::{Codec, ReaderGuard, StreamGuard};
use kernel::prelude::*;
use kernel::sync::Arc;
use reader::Reader;
pub(crate) use reader::{ReaderDecompressor, UnitBuffers};
use stream::Stream;

const PAGE_SIZE: usize = kernel::page::PAGE_SIZE;

/// What `algorithm_params` set for a compressor (C's `struct zcomp_params`): each number
/// [`NO_LEVEL`] when not set. The dictionary's bytes are shared by every stream made with them.
#[derive(Clone)]
pub(crate) struct Params {
    /// `level=`.
    pub(crate) level: i32,
    /// The backend parameters the kernel's `algorithm_params` knows ([`Abi::BACKEND_KEYS`]),
    /// in that order: taken whatever the algorithm, as C; each backend reads its own
    /// ([`Params::backend_param`]).
    pub(crate) backend: [i32; MAX_BACKEND_KEYS],
    /// `dict=`: the file's contents, read when the parameters were set.
    pub(crate) dict: Option<Arc<FileContents>>,
    /// Not `algorithm_params`' but the device's: the bytes a stream compresses at once, a page
    /// or a compression unit (`compress_unit`), which zstd sizes its parameters for.
    pub(crate) src_size: usize,
}

impl Params {
    /// Nothing set: the algorithm's defaults.
    pub(crate) const UNSET: Self = Self {
        level: NO_LEVEL,
        backend: [NO_LEVEL; MAX_BACKEND_KEYS],
        dict: None,
        src_size: PAGE_SIZE,
    };

    /// The backend parameter `key` (such as `deflate.winbits`), [`NO_LEVEL`] when not set or
    /// when the kernel's `algorithm_params` does not know it.
    // Read only by the backends that take one, which a kernel may lack.
    #[allow(dead_code)]
    pub(crate) fn backend_param(&self, key: &str) -> i32 {
        let known = Kernel::BACKEND_KEYS.iter().position(|&k| k == key);
        known
            .and_then(|i| self.backend.get(i).copied())
            .unwrap_or(NO_LEVEL)
    }
}

/// A compression algorithm's implementation, what C zram's `struct zcomp_ops` is. A backend is
/// a type without values; the state of one compression stream is its [`Backend::Context`], that
/// of one decompression context its [`Backend::ReadContext`].
pub(crate) trait Backend {
    /// The name user space writes to and reads from `comp_algorithm`.
    const NAME: &'static str;
    /// Whether C zram's configured default is this algorithm (its `CONFIG_ZRAM_DEF_COMP_*`).
    const C_DEFAULT: bool;
    /// A compression stream's state: the library's work memory or context, and the level.
    type Context: Send;
    /// A decompression context's state (`()` for a backend that decompresses without one).
    type ReadContext: Send;
    /// How the backend decompresses.
    const DECOMPRESSOR: Decompressor<Self::ReadContext>;

    /// The level when none was asked for (C's `setup_params`). Backends without levels keep
    /// this one and ignore the level.
    fn default_level() -> i32 {
        0
    }

    /// C zram 7.x's checks of the parameters as set ([`NO_LEVEL`] when not), made when the
    /// device is initialised (its `setup_params`): `EINVAL` for a level or window out of the
    /// range, `EOPNOTSUPP` for a parameter the backend does not have, each logged. 6.12 checks
    /// nothing: the library clamps or refuses a level out of its range.
    fn check(_params: &Params) -> Result {
        Ok(())
    }

    /// A stream's state with `params`, whose level is the one asked for or
    /// [`Backend::default_level`].
    fn create(params: Params) -> Result<Self::Context>;

    /// The state of another stream of the same device and algorithm as `first`, sharing what
    /// the streams may share (C's `setup_params` makes it once: zstd's digested dictionary).
    fn create_like(_first: &Self::Context, params: Params) -> Result<Self::Context> {
        Self::create(params)
    }

    /// A decompression context's state with `params` (as set: its level is not looked at),
    /// sharing what it may with `first`, the device's first compression stream of this
    /// algorithm (zstd's digested dictionary).
    fn create_reader(first: &Self::Context, params: &Params) -> Result<Self::ReadContext>;

    /// Compresses `src` into `dst`; returns the compressed length.
    fn compress(context: &mut Self::Context, src: &[u8], dst: &mut [u8]) -> Result<usize>;
}

/// How a backend decompresses `src` into the whole of `dst`; either way `EIO` unless the data
/// is valid and decompresses to exactly `dst.len()` bytes. At least one of the two is set (a
/// backend's constant; with neither, every read would fail):
/// lzo and 842 decompress without state (readers need no context, so they never wait for one),
/// zstd and deflate with a decompression context, lz4 and lz4hc without state unless the device
/// has a dictionary (their context's function knows whether it has one).
pub(crate) struct Decompressor<C> {
    /// Without state (and without a dictionary).
    pub(crate) stateless: Option<StatelessFn>,
    /// With a decompression context; preferred when both are set.
    pub(crate) with_context: Option<ContextFn<C>>,
}

/// A decompression function without state.
type StatelessFn = fn(&[u8], &mut [u8]) -> Result;
/// A decompression function with a decompression context `C`: returns the length it
/// decompressed into the destination, or for a failure a value no slice's length equals (above
/// `isize::MAX`: the library's error value, or [`FAILED`]), so that one comparison with the
/// destination's length, the caller's, finds both a failure and a short result, and the
/// function may end in a jump to the library's.
type ContextFn<C> = fn(&mut C, &[u8], &mut [u8]) -> usize;

/// What a [`ContextFn`] returns for a failure it found itself.
const FAILED: usize = usize::MAX;

/// What a [`ContextFn`] returns for `decompress`, which decompresses into the whole of `dst`
/// or fails.
#[inline(always)]
fn decompressed_len(dst: &mut [u8], decompress: impl FnOnce(&mut [u8]) -> Result) -> usize {
    let len = dst.len();
    match decompress(dst) {
        Ok(()) => len,
        Err(_) => FAILED,
    }
}

/// lz4's and lz4hc's decompression with a decompression context (with the device's dictionary,
/// or without one).
#[cfg(any(zram_rs_backend_lz4, zram_rs_backend_lz4hc))]
fn lz4_decompress(reader: &mut crate::kapi::lz4::Reader, src: &[u8], dst: &mut [u8]) -> usize {
    decompressed_len(dst, |dst| reader.decompress(src, dst))
}

impl<C> Decompressor<C> {
    /// Whether the decompressor needs no state, with a dictionary set (`dict`) or not.
    #[inline(always)]
    fn is_stateless(&self, dict: bool) -> bool {
        self.stateless.is_some() && (!dict || self.with_context.is_none())
    }

    /// Decompresses without state (so without a dictionary); `EINVAL` for a decompressor that
    /// needs a context.
    #[inline(always)]
    fn run_stateless(&self, src: &[u8], dst: &mut [u8]) -> Result {
        match self.stateless {
            Some(decompress) => decompress(src, dst),
            None => Err(EINVAL),
        }
    }

    /// Decompresses, with `context` when the decompressor takes one; returns what a
    /// [`ContextFn`] returns.
    #[inline(always)]
    fn run(&self, context: &mut C, src: &[u8], dst: &mut [u8]) -> usize {
        match (self.with_context, self.stateless) {
            (Some(decompress), _) => decompress(context, src, dst),
            (None, Some(decompress)) => decompressed_len(dst, |dst| decompress(src, dst)),
            (None, None) => FAILED,
        }
    }
}

/// Decompresses `src` into `dst` with backend `B`'s decompression context; returns what a
/// [`ContextFn`] returns. The destination first, as the libraries' functions take it, so that
/// zstd's arguments reach the library's function in the registers they came in.
#[inline(never)]
fn decompress_with<B: Backend>(context: &mut B::ReadContext, dst: &mut [u8], src: &[u8]) -> usize {
    B::DECOMPRESSOR.run(context, src, dst)
}

/// C 7.x's check of a backend without dictionaries: a dictionary set is `EOPNOTSUPP`.
#[cfg(any(zram_rs_backend_lzo, zram_rs_backend_842, zram_rs_backend_deflate))]
fn check_no_dict(name: &str, params: &Params) -> Result {
    if params.dict.is_some() {
        pr_err!("{}: dictionary is not supported\n", name);
        return Err(crate::kapi::eopnotsupp());
    }
    Ok(())
}

/// C 7.x's check of a backend without levels: a level set is `EOPNOTSUPP`.
#[cfg(any(zram_rs_backend_lzo, zram_rs_backend_842))]
fn check_no_level(name: &str, params: &Params) -> Result {
    if params.level != NO_LEVEL {
        pr_err!("{}: compression level is not supported\n", name);
        return Err(crate::kapi::eopnotsupp());
    }
    Ok(())
}

/// C 7.x's check of a level: unset, or within `levels`; `EINVAL` otherwise.
#[cfg(any(
    zram_rs_backend_lz4,
    zram_rs_backend_lz4hc,
    zram_rs_backend_zstd,
    zram_rs_backend_deflate
))]
fn check_level(name: &str, params: &Params, levels: core::ops::RangeInclusive<i32>) -> Result {
    if params.level != NO_LEVEL && !levels.contains(&params.level) {
        pr_err!("{}: invalid compression level {}\n", name, params.level);
        return Err(EINVAL);
    }
    Ok(())
}

/// A context of backend `B` with `params` ([`NO_LEVEL`] for a default), like `first` (another
/// stream's) if given. Where the kernel's ABI checks parameters at initialisation
/// ([`Abi::PARAMS_CHECKED_AT_INIT`], 7.x), they are checked first.
fn create<B: Backend>(params: Params, first: Option<&B::Context>) -> Result<B::Context> {
    if Kernel::PARAMS_CHECKED_AT_INIT {
        B::check(&params)?;
    }
    let level = if params.level == NO_LEVEL {
        B::default_level()
    } else {
        params.level
    };
    let params = Params { level, ..params };
    match first {
        Some(first) => B::create_like(first, params),
        None => B::create(params),
    }
}

/// Defines [`Algorithm`] (one variant per backend, named as the backend's type), a stream's
/// [`Context`] and a decompression context's [`ReadContext`] from the table below, with one
/// `match` over the table per operation.
macro_rules! backends {
    ($(#[cfg($cfg:meta)] $file:ident::$backend:ident),+ $(,)?) => {
        /// A compression algorithm: one entry of the table of backends.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Algorithm {
            $(
                #[doc = concat!("`", stringify!($file), "::", stringify!($backend), "`.")]
                #[cfg($cfg)]
                $backend,
            )+
        }

        impl Named for Algorithm {
            const ALL: &'static [Self] = &[$(#[cfg($cfg)] Self::$backend),+];

            fn name(self) -> &'static str {
                match self {
                    $(#[cfg($cfg)] Self::$backend => <$file::$backend as Backend>::NAME,)+
                }
            }
        }

        impl Algorithm {
            /// Whether C zram's configured default is this algorithm.
            const fn is_c_default(self) -> bool {
                match self {
                    $(#[cfg($cfg)] Self::$backend => <$file::$backend as Backend>::C_DEFAULT,)+
                }
            }

            /// Whether the algorithm decompresses without a context, with a dictionary set
            /// (`dict`) or not.
            #[inline(always)]
            fn decompresses_without_context(self, dict: bool) -> bool {
                match self {
                    $(#[cfg($cfg)] Self::$backend => {
                        <$file::$backend as Backend>::DECOMPRESSOR.is_stateless(dict)
                    })+
                }
            }

            /// Decompresses without a context; `EINVAL` for an algorithm that needs one.
            #[inline(always)]
            fn decompress_stateless(self, src: &[u8], dst: &mut [u8]) -> Result {
                match self {
                    $(#[cfg($cfg)] Self::$backend => {
                        <$file::$backend as Backend>::DECOMPRESSOR.run_stateless(src, dst)
                    })+
                }
            }
        }

        /// A stream's backend state, of its algorithm's backend.
        enum Context {
            $(#[cfg($cfg)] $backend(<$file::$backend as Backend>::Context),)+
        }

        impl Context {
            /// A context for `algorithm` with `params`, like `first` (another stream's of the
            /// same algorithm and parameters) if given.
            fn new(algorithm: Algorithm, params: Params, first: Option<&Self>) -> Result<Self> {
                Ok(match algorithm {
                    $(#[cfg($cfg)] Algorithm::$backend => {
                        let first = match first {
                            Some(Self::$backend(context)) => Some(context),
                            _ => None,
                        };
                        Self::$backend(create::<$file::$backend>(params, first)?)
                    })+
                })
            }

            /// Compresses `src` into `dst`; returns the compressed length.
            #[inline(always)]
            fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
                match self {
                    $(#[cfg($cfg)] Self::$backend(context) => {
                        <$file::$backend as Backend>::compress(context, src, dst)
                    })+
                }
            }
        }

        /// A decompression context's backend state, of its algorithm's backend.
        enum ReadContext {
            $(#[cfg($cfg)] $backend(<$file::$backend as Backend>::ReadContext),)+
        }

        impl ReadContext {
            /// A decompression context for `algorithm` with `params`, sharing what it may
            /// with `first`, the device's first compression stream's context of `algorithm`
            /// (`EINVAL` for another algorithm's).
            fn new(algorithm: Algorithm, params: &Params, first: &Context) -> Result<Self> {
                match (algorithm, first) {
                    $(#[cfg($cfg)] (Algorithm::$backend, Context::$backend(first)) => {
                        Ok(Self::$backend(
                            <$file::$backend as Backend>::create_reader(first, params)?,
                        ))
                    })+
                    #[allow(unreachable_patterns)]
                    _ => Err(EINVAL),
                }
            }

            /// Decompresses `src` into `dst`; returns what a [`ContextFn`] returns. Each arm a
            /// call of its backend's function ([`decompress_with`]) and nothing after it, so
            /// that an out-of-line caller's dispatch ends in a jump to it.
            #[inline(always)]
            fn decompressed_len(&mut self, dst: &mut [u8], src: &[u8]) -> usize {
                match self {
                    $(#[cfg($cfg)] Self::$backend(context) => {
                        decompress_with::<$file::$backend>(context, dst, src)
                    })+
                }
            }
        }
    };
}

// The table of backends, in the order `comp_algorithm` lists them (C zram's), each where
// `Kbuild` builds it.
backends![
    #[cfg(zram_rs_backend_lzo)]
    backend_lzo::LzoRle,
    #[cfg(zram_rs_backend_lzo)]
    backend_lzo::Lzo,
    #[cfg(zram_rs_backend_lz4)]
    backend_lz4::Lz4,
    #[cfg(zram_rs_backend_lz4hc)]
    backend_lz4hc::Lz4hc,
    #[cfg(zram_rs_backend_zstd)]
    backend_zstd::Zstd,
    #[cfg(zram_rs_backend_deflate)]
    backend_deflate::Deflate,
    #[cfg(zram_rs_backend_842)]
    backend_842::Sw842,
];

impl Algorithm {
    /// The default: C zram's (`CONFIG_ZRAM_DEF_COMP`) on a kernel configured with it, so that
    /// both drivers start from the same algorithm; else the table's first (lzo-rle, C zram's
    /// own default, where the kernel has lzo). `Kbuild` refuses a kernel with no backend.
    pub(crate) const DEFAULT: Algorithm = {
        let mut i = 0;
        let mut chosen = Self::ALL[0];
        while i < Self::ALL.len() {
            if Self::ALL[i].is_c_default() {
                chosen = Self::ALL[i];
            }
            i += 1;
        }
        chosen
    };
}

/// A decompressor that needs no decompression context. It exists only for an algorithm whose
/// backend decompresses without one (lzo, lz4, lz4hc, 842; lz4 and lz4hc without a
/// dictionary), on a kernel whose zsmalloc needs no scratch buffer to show an object
/// ([`ZsPool::READS_NEED_SCRATCH`]): then a reader borrows nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stateless(Algorithm);

impl Stateless {
    /// The stateless decompressor of `algorithm` with `params`, if it has one (lz4's and
    /// lz4hc's need a context with a dictionary).
    #[inline(always)]
    fn new(algorithm: Algorithm, params: &Params) -> Option<Self> {
        (!ZsPool::READS_NEED_SCRATCH
            && algorithm.decompresses_without_context(params.dict.is_some()))
        .then_some(Self(algorithm))
    }

    /// Decompresses `src` into `dst`, which the result must fill exactly. Does not sleep.
    ///
    /// Out of line, so that the caller's closure around it inlines and the arguments travel in
    /// registers rather than through the closure's captures.
    #[inline(never)]
    pub(crate) fn decompress(self, src: &[u8], dst: &mut [u8]) -> Result {
        self.0.decompress_stateless(src, dst)
    }
}
