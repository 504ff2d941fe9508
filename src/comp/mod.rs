// SPDX-License-Identifier: GPL-2.0
//! The compression layer, as C zram's `zcomp`: the [`Backend`] trait that each algorithm
//! implements in a `backend_*.rs` file of its own (over the library wrappers of `kapi`), the
//! table of backends that defines [`Algorithm`], and the streams that compress pages. A
//! [`Stream`] owns one backend context and a two-page output buffer; a [`StreamPool`] holds one
//! stream per online CPU so that writers compress in parallel, and lends them out without a
//! lock (one atomic exchange), sleeping only while all are busy.
//!
//! Dispatch is static: the table generates a `match` over the backends for each operation, so
//! a page costs no indirect call and no allocation. Adding an algorithm takes a backend file
//! (and its `mod` line) and one entry in the table. An algorithm is offered only when the
//! kernel offers it: C zram's `CONFIG_ZRAM_BACKEND_*` where C zram is configured, else its
//! libraries (the kernel's `CONFIG_*` cfgs).

mod backend_842;
mod backend_deflate;
mod backend_lz4;
mod backend_lz4hc;
mod backend_lzo;
mod backend_zstd;

use crate::algorithm::{Named, NO_LEVEL};
use crate::kapi::file::FileContents;
use crate::kapi::lockdep::{LockClass, LockdepMap};
use crate::kapi::trylock::{TryLock, TryLockGuard};
use crate::kapi::zspool::ZsPool;
use crate::kapi::{self, cpu, mem};
use core::sync::atomic::{fence, AtomicUsize, Ordering};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KVec, VVec};
use kernel::new_condvar;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar, Mutex};

const PAGE_SIZE: usize = kernel::page::PAGE_SIZE;

/// A backend's [`Backend::AVAILABLE`]: on a kernel configured with C zram, whether C zram
/// offers the algorithm there (its `CONFIG_ZRAM_BACKEND_*` option), so that both drivers list
/// the same algorithms; on one without, whether the kernel has the compressor and its
/// decompressor library, built in or as modules.
macro_rules! backend_built {
    ($backend:ident, $compress:ident, $decompress:ident) => {
        cfg!(any(
            all(any(CONFIG_ZRAM, CONFIG_ZRAM = "m"), $backend),
            all(
                not(any(CONFIG_ZRAM, CONFIG_ZRAM = "m")),
                any($compress, $compress = "m"),
                any($decompress, $decompress = "m")
            )
        ))
    };
}
use backend_built;

/// What `algorithm_params` set for a compressor (C's `struct zcomp_params`): each number
/// [`NO_LEVEL`] when not set. The dictionary's bytes are shared by every stream made with them.
#[derive(Clone)]
pub(crate) struct Params {
    /// `level=`.
    pub(crate) level: i32,
    /// `deflate.winbits=` (7.x).
    pub(crate) deflate_winbits: i32,
    /// `dict=`: the file's contents, read when the parameters were set.
    pub(crate) dict: Option<Arc<FileContents>>,
}

impl Params {
    /// Nothing set: the algorithm's defaults.
    pub(crate) const UNSET: Self = Self {
        level: NO_LEVEL,
        deflate_winbits: NO_LEVEL,
        dict: None,
    };
}

/// A compression algorithm's implementation, what C zram's `struct zcomp_ops` is. A backend is
/// a type without values; the state of one stream is its [`Backend::Context`].
pub(crate) trait Backend {
    /// The name user space writes to and reads from `comp_algorithm`.
    const NAME: &'static str;
    /// Whether the algorithm is offered on this kernel ([`backend_built!`]).
    const AVAILABLE: bool;
    /// A stream's state: the library's work memory or contexts, and the level.
    type Context: Send;
    /// How the backend decompresses.
    const DECOMPRESSOR: Decompressor<Self::Context>;

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

    /// Compresses `src` into `dst`; returns the compressed length.
    fn compress(context: &mut Self::Context, src: &[u8], dst: &mut [u8]) -> Result<usize>;
}

/// How a backend decompresses `src` into the whole of `dst`; either way `EIO` unless the data
/// is valid and decompresses to exactly `dst.len()` bytes.
pub(crate) enum Decompressor<C> {
    /// Without state (lzo, lz4, 842): readers need no stream, so they never wait for one.
    Stateless(fn(&[u8], &mut [u8]) -> Result),
    /// With a stream's context (zstd, deflate).
    WithContext(fn(&mut C, &[u8], &mut [u8]) -> Result),
    /// Without state unless the stream has a dictionary (lz4, lz4hc): the first function
    /// without, the second with a stream's context, which knows whether it has one.
    StatelessWithoutDict(
        fn(&[u8], &mut [u8]) -> Result,
        fn(&mut C, &[u8], &mut [u8]) -> Result,
    ),
}

impl<C> Decompressor<C> {
    /// Whether the decompressor needs no state, with a dictionary set (`dict`) or not.
    #[inline(always)]
    fn is_stateless(&self, dict: bool) -> bool {
        match self {
            Self::Stateless(_) => true,
            Self::StatelessWithoutDict(..) => !dict,
            Self::WithContext(_) => false,
        }
    }

    /// Decompresses without state (so without a dictionary); `EINVAL` for a decompressor that
    /// needs a context.
    #[inline(always)]
    fn run_stateless(&self, src: &[u8], dst: &mut [u8]) -> Result {
        match self {
            Self::Stateless(decompress) | Self::StatelessWithoutDict(decompress, _) => {
                decompress(src, dst)
            }
            Self::WithContext(_) => Err(EINVAL),
        }
    }

    /// Decompresses, with `context` when the decompressor needs it.
    #[inline(always)]
    fn run(&self, context: &mut C, src: &[u8], dst: &mut [u8]) -> Result {
        match self {
            Self::Stateless(decompress) => decompress(src, dst),
            Self::WithContext(decompress) | Self::StatelessWithoutDict(_, decompress) => {
                decompress(context, src, dst)
            }
        }
    }
}

/// C 7.x's check of a backend without dictionaries: a dictionary set is `EOPNOTSUPP`.
fn check_no_dict(name: &str, params: &Params) -> Result {
    if params.dict.is_some() {
        pr_err!("{}: dictionary is not supported\n", name);
        return Err(kapi::eopnotsupp());
    }
    Ok(())
}

/// C 7.x's check of a backend without levels: a level set is `EOPNOTSUPP`.
fn check_no_level(name: &str, params: &Params) -> Result {
    if params.level != NO_LEVEL {
        pr_err!("{}: compression level is not supported\n", name);
        return Err(kapi::eopnotsupp());
    }
    Ok(())
}

/// C 7.x's check of a level: unset, or within `levels`; `EINVAL` otherwise.
fn check_level(name: &str, params: &Params, levels: core::ops::RangeInclusive<i32>) -> Result {
    if params.level != NO_LEVEL && !levels.contains(&params.level) {
        pr_err!("{}: invalid compression level {}\n", name, params.level);
        return Err(EINVAL);
    }
    Ok(())
}

/// A context of backend `B` with `params` ([`NO_LEVEL`] for a default), like `first` (another
/// stream's) if given; `EINVAL` when the kernel does not offer the backend. On the 7.3 ABI the
/// parameters are checked first, as C 7.x does when a device is initialised.
fn create<B: Backend>(params: Params, first: Option<&B::Context>) -> Result<B::Context> {
    if !B::AVAILABLE {
        return Err(EINVAL);
    }
    if cfg!(zram_abi_7_3) {
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

/// Defines [`Algorithm`] (one variant per backend, named as the backend's type) and a stream's
/// [`Context`] from the table below, with one `match` over the table per operation.
macro_rules! backends {
    ($($file:ident::$backend:ident),+ $(,)?) => {
        /// A compression algorithm: one entry of the table of backends.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Algorithm {
            $(
                #[doc = concat!("`", stringify!($file), "::", stringify!($backend), "`.")]
                $backend,
            )+
        }

        impl Named for Algorithm {
            const ALL: &'static [Self] = &[$(Self::$backend),+];

            fn name(self) -> &'static str {
                match self {
                    $(Self::$backend => <$file::$backend as Backend>::NAME,)+
                }
            }
        }

        impl Algorithm {
            /// Whether the algorithm is offered on this kernel.
            fn available(self) -> bool {
                match self {
                    $(Self::$backend => <$file::$backend as Backend>::AVAILABLE,)+
                }
            }

            /// Whether the algorithm decompresses without a stream, with a dictionary set
            /// (`dict`) or not.
            #[inline(always)]
            fn decompresses_without_stream(self, dict: bool) -> bool {
                match self {
                    $(Self::$backend => {
                        <$file::$backend as Backend>::DECOMPRESSOR.is_stateless(dict)
                    })+
                }
            }

            /// Decompresses without a stream; `EINVAL` for an algorithm that needs one.
            #[inline(always)]
            fn decompress_stateless(self, src: &[u8], dst: &mut [u8]) -> Result {
                match self {
                    $(Self::$backend => {
                        <$file::$backend as Backend>::DECOMPRESSOR.run_stateless(src, dst)
                    })+
                }
            }
        }

        /// A stream's backend state, of its algorithm's backend.
        enum Context {
            $($backend(<$file::$backend as Backend>::Context),)+
        }

        impl Context {
            /// A context for `algorithm` with `params`, like `first` (another stream's of the
            /// same algorithm and parameters) if given.
            fn new(algorithm: Algorithm, params: Params, first: Option<&Self>) -> Result<Self> {
                Ok(match algorithm {
                    $(Algorithm::$backend => {
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
                    $(Self::$backend(context) => {
                        <$file::$backend as Backend>::compress(context, src, dst)
                    })+
                }
            }

            /// Decompresses `src` into the whole of `dst`.
            #[inline(always)]
            fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result {
                match self {
                    $(Self::$backend(context) => {
                        <$file::$backend as Backend>::DECOMPRESSOR.run(context, src, dst)
                    })+
                }
            }
        }
    };
}

// The table of backends, in the order `comp_algorithm` lists them (C zram's).
backends![
    backend_lzo::LzoRle,
    backend_lzo::Lzo,
    backend_lz4::Lz4,
    backend_lz4hc::Lz4hc,
    backend_zstd::Zstd,
    backend_deflate::Deflate,
    backend_842::Sw842,
];

impl Algorithm {
    /// The default: C zram's (`CONFIG_ZRAM_DEF_COMP`) on a kernel configured with it, so that
    /// both drivers start from the same algorithm; lzo-rle, C zram's own default, otherwise.
    pub(crate) const DEFAULT: Algorithm = if cfg!(CONFIG_ZRAM_DEF_COMP_LZO) {
        Algorithm::Lzo
    } else if cfg!(CONFIG_ZRAM_DEF_COMP_LZ4) {
        Algorithm::Lz4
    } else if cfg!(CONFIG_ZRAM_DEF_COMP_LZ4HC) {
        Algorithm::Lz4hc
    } else if cfg!(CONFIG_ZRAM_DEF_COMP_ZSTD) {
        Algorithm::Zstd
    } else if cfg!(CONFIG_ZRAM_DEF_COMP_DEFLATE) {
        Algorithm::Deflate
    } else if cfg!(CONFIG_ZRAM_DEF_COMP_842) {
        Algorithm::Sw842
    } else {
        Algorithm::LzoRle
    };
}

/// Whether `algorithm` is offered on this kernel.
pub(crate) fn available(algorithm: Algorithm) -> bool {
    algorithm.available()
}

/// A decompressor that needs no stream. It exists only for an algorithm whose backend
/// decompresses without a context (lzo, lz4, lz4hc, 842; lz4 and lz4hc without a dictionary),
/// on a kernel whose zsmalloc needs no
/// scratch buffer to show an object ([`ZsPool::READS_NEED_SCRATCH`]): then a reader never
/// waits for a stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stateless(Algorithm);

impl Stateless {
    /// The stateless decompressor of `algorithm` with `params`, if it has one (lz4's and
    /// lz4hc's need a stream with a dictionary).
    #[inline(always)]
    fn new(algorithm: Algorithm, params: &Params) -> Option<Self> {
        (!ZsPool::READS_NEED_SCRATCH
            && algorithm.decompresses_without_stream(params.dict.is_some()))
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

/// One compression stream: a backend's context and a two-page output buffer (room for data
/// that grows when compressed).
pub(crate) struct Stream {
    context: Context,
    buffer: VVec<u8>,
}

impl Stream {
    /// A stream for `algorithm` with `params`, like `first` (another stream of the same
    /// algorithm and parameters, whose shared state it shares) if given.
    pub(crate) fn new(
        algorithm: Algorithm,
        params: Params,
        first: Option<&Stream>,
    ) -> Result<Self> {
        let context = Context::new(algorithm, params, first.map(|first| &first.context))?;
        Ok(Self {
            context,
            buffer: mem::vzalloc(2 * PAGE_SIZE)?,
        })
    }

    /// Compresses `src` (one page); returns the compressed bytes, in the stream's buffer.
    #[inline(always)]
    pub(crate) fn compress(&mut self, src: &[u8]) -> Result<&[u8]> {
        let len = self.context.compress(src, &mut self.buffer)?;
        self.buffer.get(..len).ok_or(EINVAL)
    }

    /// The stream's buffer, idle while it decompresses, and its decompressor: zsmalloc may copy
    /// the object to be read into the buffer (as C zram lends its stream's `local_copy`).
    pub(crate) fn scratch_and_decompressor(&mut self) -> (&mut [u8], StreamDecompressor<'_>) {
        (
            &mut self.buffer,
            StreamDecompressor {
                context: &mut self.context,
            },
        )
    }
}

/// A stream's decompressor, borrowed apart from its buffer.
pub(crate) struct StreamDecompressor<'a> {
    context: &'a mut Context,
}

impl StreamDecompressor<'_> {
    /// Decompresses `src` into `dst`, which the result must fill exactly. Takes the borrow by
    /// value, so the context's address is the argument itself.
    #[inline(never)]
    pub(crate) fn decompress(self, src: &[u8], dst: &mut [u8]) -> Result {
        self.context.decompress(src, dst)
    }
}

/// The streams of one device: one per online CPU at initialisation. A borrower takes a place
/// with one atomic compare-and-exchange (a [`TryLock`]), trying its own CPU's place first (as C
/// zram's per-CPU streams), then the others; only when all are lent out does it sleep on
/// `returned`.
///
/// # Invariants
///
/// `sleepers` counts borrowers that registered under `sleep_lock` and may be waiting on
/// `returned`.
#[pin_data]
pub(crate) struct StreamPool {
    places: KVec<TryLock<Stream>>,
    /// What lockdep knows of the places: one lock of the class "zram_rs stream", held by
    /// each borrower (no thread borrows two streams).
    lockdep: LockdepMap,
    stateless: Option<Stateless>,
    sleepers: AtomicUsize,
    #[pin]
    sleep_lock: Mutex<()>,
    #[pin]
    returned: CondVar,
}

/// A stream borrowed from a [`StreamPool`]; goes back on drop. Dropping may sleep (it wakes a
/// waiting borrower under a mutex), so a guard must not be dropped in atomic context, such as
/// under a slot lock.
pub(crate) struct StreamGuard<'a> {
    // Fields drop in declaration order: the place is unlocked before `_wake` looks for sleepers.
    stream: TryLockGuard<'a, Stream>,
    _wake: WakeSleeper<'a>,
}

/// The second half of returning a stream, after its place is unlocked: wakes a sleeping
/// borrower, if any.
struct WakeSleeper<'a> {
    pool: &'a StreamPool,
}

impl StreamPool {
    /// `count` streams of `algorithm` with `params`.
    pub(crate) fn new(
        algorithm: Algorithm,
        params: Params,
        count: usize,
    ) -> Result<impl PinInit<Self>> {
        let first = Stream::new(algorithm, params.clone(), None)?;
        let mut places = KVec::with_capacity(count.max(1), GFP_KERNEL)?;
        for _ in 1..count.max(1) {
            places.push(
                TryLock::new(Stream::new(algorithm, params.clone(), Some(&first))?),
                GFP_KERNEL,
            )?;
        }
        places.push(TryLock::new(first), GFP_KERNEL)?;
        let lockdep = LockdepMap::new(LockClass::Stream)?;
        Ok(pin_init!(Self {
            places,
            lockdep,
            stateless: Stateless::new(algorithm, &params),
            sleepers: AtomicUsize::new(0),
            sleep_lock <- new_mutex!((), "StreamPool::sleep_lock"),
            returned <- new_condvar!("StreamPool::returned"),
        }))
    }

    /// The decompressor that needs no stream, when the pool's algorithm and parameters have
    /// one ([`Stateless`]): readers then need no stream.
    #[inline(always)]
    pub(crate) fn stateless(&self) -> Option<Stateless> {
        self.stateless
    }

    /// Borrows a free stream if there is one, trying the current CPU's first; never sleeps.
    #[inline(always)]
    pub(crate) fn try_get(&self) -> Option<StreamGuard<'_>> {
        let count = self.places.len();
        let first = (cpu::this_cpu() as usize).checked_rem(count)?;
        let (lower, own_and_higher) = self.places.split_at(first);
        let guard = Iterator::chain(own_and_higher.iter(), lower).find_map(|place| {
            place.try_lock().map(|stream| StreamGuard {
                stream,
                _wake: WakeSleeper { pool: self },
            })
        });
        if guard.is_some() {
            // Released by the guard's drop.
            self.lockdep.acquire(true);
        }
        guard
    }

    /// Borrows a stream, sleeping until one is free.
    #[inline(always)]
    pub(crate) fn get(&self) -> StreamGuard<'_> {
        // Lockdep learns, on every borrow and not only when all streams are lent out, that a
        // stream may be waited for with the locks held now (`try_get` alone adds no
        // dependency: it never waits).
        self.lockdep.might_wait();
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
        &self.stream
    }
}

impl core::ops::DerefMut for StreamGuard<'_> {
    fn deref_mut(&mut self) -> &mut Stream {
        &mut self.stream
    }
}

impl Drop for StreamGuard<'_> {
    fn drop(&mut self) {
        // Then the fields: the place is unlocked, a sleeper woken.
        self._wake.pool.lockdep.release();
    }
}

impl Drop for WakeSleeper<'_> {
    fn drop(&mut self) {
        // The place was unlocked (a release store) just before: a borrower registering after
        // this fence finds it free; one registered before is seen here and woken.
        fence(Ordering::SeqCst);
        if self.pool.sleepers.load(Ordering::Relaxed) > 0 {
            let _sleep = self.pool.sleep_lock.lock();
            self.pool.returned.notify_one();
        }
    }
}
