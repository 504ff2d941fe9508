// SPDX-License-Identifier: GPL-2.0
//! A pool of interchangeable values lent out one borrower at a time ([`Pool`]): the
//! compression streams of an algorithm and, apart from them, its decompression contexts are
//! each one (`codec.rs`). A borrower takes a place (a [`TryLock`]) with one atomic exchange
//! for its own CPU's place, tried first, and a compare-and-exchange after a look for each of
//! the others, and sleeps only while all are lent out.

use crate::kapi::cpu;
use crate::kapi::lockdep::{LockClass, LockdepMap};
use crate::kapi::trylock::{TryLock, TryLockGuard};
use core::sync::atomic::{fence, AtomicUsize, Ordering};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KVec;
use kernel::prelude::*;
use kernel::sync::{CondVar, Mutex};
use kernel::{new_condvar, new_mutex};

/// Values lent out one borrower at a time: a place per value, the current CPU's tried first (as
/// C zram's per-CPU streams), then the others; only when all are lent out does a borrower sleep
/// on `returned`.
///
/// # Invariants
///
/// `sleepers` counts borrowers that registered under `sleep_lock` and may be waiting on
/// `returned`. `places` is never empty.
#[pin_data]
pub(crate) struct Pool<T> {
    places: KVec<TryLock<T>>,
    /// What lockdep knows of the places: one lock of the pool's class, held by each borrower
    /// (no thread borrows two values of one class).
    lockdep: LockdepMap,
    sleepers: AtomicUsize,
    #[pin]
    sleep_lock: Mutex<()>,
    #[pin]
    returned: CondVar,
}

/// A value borrowed from a [`Pool`]; goes back on drop. Dropping may sleep (it wakes a waiting
/// borrower under a mutex), so a guard must not be dropped in atomic context, such as inside
/// 6.12's zsmalloc mapping, which disables preemption (a slot lock is no such context: its
/// holders may sleep).
pub(crate) struct PoolGuard<'a, T> {
    // Fields drop in declaration order: the place is unlocked before `_wake` looks for sleepers.
    value: TryLockGuard<'a, T>,
    _wake: WakeSleeper<'a, T>,
}

/// The second half of returning a value, after its place is unlocked: wakes a sleeping
/// borrower, if any.
struct WakeSleeper<'a, T> {
    pool: &'a Pool<T>,
}

impl<T> Pool<T> {
    /// A pool lending `values` (at least one), each borrow seen by lockdep as a lock of `class`.
    pub(crate) fn new(class: LockClass, values: KVec<T>) -> Result<impl PinInit<Self>> {
        if values.is_empty() {
            return Err(EINVAL);
        }
        let mut places = KVec::with_capacity(values.len(), GFP_KERNEL)?;
        for value in values {
            places.push(TryLock::new(value), GFP_KERNEL)?;
        }
        let lockdep = LockdepMap::new(class)?;
        // INVARIANT: `places` is not empty; no sleeper yet.
        Ok(pin_init!(Self {
            places,
            lockdep,
            sleepers: AtomicUsize::new(0),
            sleep_lock <- new_mutex!((), "Pool::sleep_lock"),
            returned <- new_condvar!("Pool::returned"),
        }))
    }

    /// Borrows a free value if there is one, trying the current CPU's place first; never
    /// sleeps. The own place is tried here, inline; the others out of line.
    #[inline(always)]
    pub(crate) fn try_get(&self) -> Option<PoolGuard<'_, T>> {
        let cpu = cpu::this_cpu() as usize;
        let own = self.places.get(cpu).and_then(TryLock::try_lock_likely_free);
        let value = match own {
            Some(value) => value,
            None => self.try_lock_any(cpu)?,
        };
        // Released by the guard's drop.
        self.lockdep.acquire(true);
        Some(PoolGuard {
            value,
            _wake: WakeSleeper { pool: self },
        })
    }

    /// Takes a free place, starting from `cpu`'s (modulo the pool's size) and going round;
    /// never sleeps.
    #[inline(never)]
    fn try_lock_any(&self, cpu: usize) -> Option<TryLockGuard<'_, T>> {
        let first = cpu.checked_rem(self.places.len())?;
        let (lower, own_and_higher) = self.places.split_at(first);
        Iterator::chain(own_and_higher.iter(), lower).find_map(TryLock::try_lock)
    }

    /// Borrows a value, sleeping until one is free.
    #[inline(always)]
    pub(crate) fn get(&self) -> PoolGuard<'_, T> {
        // Lockdep learns, on every borrow and not only when all are lent out, that a value may
        // be waited for with the locks held now (`try_get` alone adds no dependency: it never
        // waits).
        self.lockdep.might_wait();
        match self.try_get() {
            Some(value) => value,
            None => self.get_after_wait(),
        }
    }

    /// [`Self::get`] when every value is lent out.
    #[inline(never)]
    fn get_after_wait(&self) -> PoolGuard<'_, T> {
        let mut sleep = self.sleep_lock.lock();
        loop {
            // Register, then look again: a guard that returns its value after this sees the
            // registration (both sides fence) and wakes us under `sleep_lock`, which we hold
            // until `wait` has queued us.
            self.sleepers.fetch_add(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            let found = self.try_get();
            if found.is_none() {
                self.returned.wait(&mut sleep);
            }
            self.sleepers.fetch_sub(1, Ordering::Relaxed);
            if let Some(value) = found {
                return value;
            }
        }
    }
}

impl<T> PoolGuard<'_, T> {
    /// Whether another borrower sleeps for a value of this pool (a relaxed look: one that is
    /// registering right now may be missed, and is woken when this value goes back).
    #[inline(always)]
    pub(crate) fn wanted(&self) -> bool {
        self._wake.pool.sleepers.load(Ordering::Relaxed) != 0
    }
}

impl<T> core::ops::Deref for PoolGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> core::ops::DerefMut for PoolGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> Drop for PoolGuard<'_, T> {
    fn drop(&mut self) {
        // Then the fields: the place is unlocked, a sleeper woken.
        self._wake.pool.lockdep.release();
    }
}

impl<T> Drop for WakeSleeper<'_, T> {
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
