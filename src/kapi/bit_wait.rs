// SPDX-License-Identifier: GPL-2.0
//! Sleeping while a lock bit of an atomic word is set, and waking the sleepers: the kernel's
//! hashed wait queues keyed by the word's address (`wait_var_event()`, `wake_up_var()`), as C
//! zram 7.3's slot lock sleeps on its `ZRAM_ENTRY_LOCK` bit. A sleeper sets a second bit of the
//! word, the waiters bit, before it sleeps, so that an unlock that finds that bit clear (the
//! common case) calls nothing. The lock itself (which bits, what the word holds besides) is the
//! caller's: `table.rs`. Both functions are marked cold: a lock is rarely contended, and the
//! compiler then keeps the values its callers spill around the calls off their fast paths.

use super::ffi;
use core::sync::atomic::{fence, AtomicU32, Ordering};

/// Sleeps (uninterruptibly) while `lock` is set in `word`, setting `waiters` in it (atomically,
/// with the look at `lock`) each time it finds `lock` set; returns once it saw `lock` clear,
/// without taking it (the caller tries again and may come back). `lock` may be any bit whose
/// clearing is followed by [`wake_waiters`] whenever `waiters` was set (a slot's lock or mark,
/// a disk's claim). Must be called where sleeping is allowed.
#[cold]
pub(crate) fn wait_while_set(word: &AtomicU32, lock: u32, waiters: u32) {
    // SAFETY: `word` is a live atomic 32-bit word (the layout of `atomic_t`) for the whole
    // call, changed here only atomically; the bits are passed as C `int`s, bit for bit.
    unsafe { ffi::zram_rs_wait_var_bit(word.as_ptr().cast(), lock as i32, waiters as i32) };
}

/// Wakes the threads sleeping in [`wait_while_set`] on `word`, after an unlock that found the
/// waiters bit set (and cleared it with the lock bit).
#[cold]
pub(crate) fn wake_waiters(word: &AtomicU32) {
    // The unlock's store is ordered before `wake_up_var()`'s look at the wait queue, as the
    // kernel asks of a condition changed before a wake.
    fence(Ordering::SeqCst);
    // SAFETY: `wake_up_var()` only hashes the address and wakes the entries of that key.
    unsafe { ffi::wake_up_var(word.as_ptr().cast()) };
}
