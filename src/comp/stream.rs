// SPDX-License-Identifier: GPL-2.0
//! Compression streams and the pool that lends them: a [`Stream`] owns one backend context
//! and a two-page output buffer; a [`StreamPool`] holds one stream per online CPU at
//! initialisation, so that writers compress in parallel, and lends them out without a lock
//! (one atomic exchange on a place, the current CPU's first), sleeping only while all are
//! busy.
//!
//! The pool is sized once, at initialisation, rather than per CPU following CPU hotplug as C
//! zram's `zcomp` is: a CPU that comes online later borrows from the same places (a borrower
//! tries every place, its own first), so nothing is missing, only fewer streams than CPUs;
//! the read path's own decompression contexts are the next change to this file.

use super::{Algorithm, Context, Params, Stateless, PAGE_SIZE};
use crate::kapi::lockdep::{LockClass, LockdepMap};
use crate::kapi::trylock::{TryLock, TryLockGuard};
use crate::kapi::{cpu, mem};
use core::sync::atomic::{fence, AtomicUsize, Ordering};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KVec, VVec};
use kernel::prelude::*;
use kernel::sync::{CondVar, Mutex};
use kernel::{new_condvar, new_mutex};

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
/// inside 6.12's zsmalloc mapping, which disables preemption (a slot lock is no such context:
/// its holders may sleep).
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
