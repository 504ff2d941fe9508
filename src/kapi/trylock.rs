// SPDX-License-Identifier: GPL-2.0
//! A lock that is only ever tried ([`TryLock`]): taking it is one atomic compare-and-exchange
//! (or, for a lock that is most likely free, one exchange) that fails at once when it is held,
//! releasing it one store. It never waits and touches neither preemption nor lockdep, so it
//! may be tried in atomic context and held across a sleep; a user that must wait for one
//! brings its own wait queue (the stream pool does). The `UnsafeCell` of the value it guards
//! is reached here only.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, Ordering};

/// A value and whether it is lent out to a [`TryLockGuard`].
pub(crate) struct TryLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through the one guard that holds the lock (type invariant of
// `TryLockGuard`), so sharing the lock at most hands the value from thread to thread.
unsafe impl<T: Send> Sync for TryLock<T> {}

impl<T> TryLock<T> {
    /// An unlocked lock around `value`.
    pub(crate) fn new(value: T) -> Self {
        Self {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the lock if it is free; never waits. A held lock is passed over with a plain load,
    /// without taking its cache line for writing.
    #[inline(always)]
    pub(crate) fn try_lock(&self) -> Option<TryLockGuard<'_, T>> {
        let taken = !self.locked.load(Ordering::Relaxed)
            && self
                .locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
        // `then`, not `then_some`: a guard made for a lock we did not take would release it when
        // dropped.
        // INVARIANT: made only when this thread just took the lock.
        taken.then(|| TryLockGuard {
            lock: self,
            _value: PhantomData,
        })
    }

    /// Takes the lock if it is free, for a lock that most likely is (a CPU's own place): one
    /// atomic exchange, without the look first that [`Self::try_lock`] takes, which would only
    /// add a load and a branch where the cache line is taken for writing anyway. Never waits.
    #[inline(always)]
    pub(crate) fn try_lock_likely_free(&self) -> Option<TryLockGuard<'_, T>> {
        // Storing `true` into a held lock changes nothing.
        let taken = !self.locked.swap(true, Ordering::Acquire);
        // INVARIANT: made only when this thread's exchange found the lock free.
        taken.then(|| TryLockGuard {
            lock: self,
            _value: PhantomData,
        })
    }
}

/// The holder of a [`TryLock`]; releases it on drop (a release store, and nothing else).
///
/// # Invariants
///
/// This guard took `lock` and is the only user of its value until it drops.
pub(crate) struct TryLockGuard<'a, T> {
    lock: &'a TryLock<T>,
    /// The guard is `Sync` only for a `Sync` value, as `&mut T` is.
    _value: PhantomData<&'a mut T>,
}

impl<T> core::ops::Deref for TryLockGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard is the value's only user (type invariant).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> core::ops::DerefMut for TryLockGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the value's only user (type invariant), borrowed mutably.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for TryLockGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}
