// SPDX-License-Identifier: GPL-2.0
//! A value guarded by the kernel's reader/writer semaphore ([`RwSemaphore`], C's
//! `struct rw_semaphore`): any number of readers or one writer, sleeping waits, a waiting
//! writer served before most readers that come after it (the kernel lets a reader take a lock
//! held by one other reader), and seen by lockdep (class "Zram::init_lock",
//! made in `shim.c`: `init_rwsem()` is a macro with a static key). The kernel crate of 6.12 and
//! 7.3 has no such lock; C zram's `init_lock` is one.

use super::ffi;
use core::cell::UnsafeCell;
use core::marker::{PhantomData, PhantomPinned};
use core::ops::{Deref, DerefMut};
use kernel::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A value and the reader/writer semaphore that guards it.
///
/// # Invariants
///
/// `sem` was initialised by `init_rwsem()` and is never moved (the type is pinned). `data` is
/// reached only through a [`ReadGuard`] (shared, while `sem` is held for reading) or a
/// [`WriteGuard`] (exclusive, while `sem` is held for writing).
#[pin_data]
pub(crate) struct RwSemaphore<T> {
    #[pin]
    sem: Opaque<bindings::rw_semaphore>,
    data: UnsafeCell<T>,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: moving the semaphore moves the value with it; no guard can outlive the borrow it
// holds, so none is held while it moves.
unsafe impl<T: Send> Send for RwSemaphore<T> {}
// SAFETY: readers share `&T` (hence `T: Sync`), a writer gets `&mut T` from any thread (hence
// `T: Send`); the semaphore serialises them (type invariant).
unsafe impl<T: Send + Sync> Sync for RwSemaphore<T> {}

impl<T> RwSemaphore<T> {
    /// A new semaphore around `data`, of the lockdep class "Zram::init_lock".
    pub(crate) fn new(data: T) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `sem` points to memory of a `struct rw_semaphore` that stays in place (it
            // is pinned); `init_rwsem()` initialises it whole.
            sem <- Opaque::ffi_init(|sem| unsafe { ffi::zram_rs_init_rwsem(sem) }),
            data: UnsafeCell::new(data),
            _pin: PhantomPinned,
        })
    }

    /// Takes the semaphore for reading, waiting (sleeping) for a writer, and behind a waiting
    /// writer.
    pub(crate) fn read(&self) -> ReadGuard<'_, T> {
        // SAFETY: `sem` is initialised (type invariant); the guard releases it.
        unsafe { bindings::down_read(self.sem.get()) };
        // INVARIANT: the semaphore is held for reading.
        ReadGuard {
            lock: self,
            _not_send: PhantomData,
        }
    }

    /// Takes the semaphore for writing, waiting (sleeping) for every reader and writer.
    pub(crate) fn write(&self) -> WriteGuard<'_, T> {
        // SAFETY: `sem` is initialised (type invariant); the guard releases it.
        unsafe { bindings::down_write(self.sem.get()) };
        // INVARIANT: the semaphore is held for writing.
        WriteGuard {
            lock: self,
            _not_send: PhantomData,
        }
    }
}

/// Shared access to the value while the semaphore is held for reading.
///
/// # Invariants
///
/// `lock.sem` is held for reading by this guard, released on drop.
pub(crate) struct ReadGuard<'a, T> {
    lock: &'a RwSemaphore<T>,
    /// Released by the task that took it (lockdep, and the owner of PREEMPT_RT's rt_mutex).
    _not_send: PhantomData<*mut ()>,
}

impl<T> Deref for ReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: readers only share the value; no writer holds the semaphore (type invariant).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> Drop for ReadGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the semaphore for reading (type invariant).
        unsafe { bindings::up_read(self.lock.sem.get()) };
    }
}

/// Exclusive access to the value while the semaphore is held for writing.
///
/// # Invariants
///
/// `lock.sem` is held for writing by this guard, released on drop.
pub(crate) struct WriteGuard<'a, T> {
    lock: &'a RwSemaphore<T>,
    /// Released by the task that took it (lockdep, and the owner of PREEMPT_RT's rt_mutex).
    _not_send: PhantomData<*mut ()>,
}

impl<T> Deref for WriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the writer is alone with the value (type invariant).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for WriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the writer is alone with the value (type invariant), and this is the only
        // borrow of the guard.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for WriteGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the semaphore for writing (type invariant).
        unsafe { bindings::up_write(self.lock.sem.get()) };
    }
}
