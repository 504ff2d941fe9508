// SPDX-License-Identifier: GPL-2.0
//! Lockdep maps for the locks lockdep cannot see by itself — the slot table's bit locks and the
//! places of the compression stream and decompression context pools — so that the debug kernel
//! checks their ordering against every other lock, as C zram upstream does for its slot locks.
//! The maps and their class keys live in `shim.c` (lockdep's acquire and release are macros).
//! Without `CONFIG_DEBUG_LOCK_ALLOC` the type is empty and its methods do nothing.

#[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
use super::ffi;
use kernel::prelude::*;

/// The lock classes of [`LockdepMap`].
#[derive(Clone, Copy)]
pub(crate) enum LockClass {
    /// "zram_rs slot": a bit lock whose waiters sleep (the wait type of a mutex).
    Slot,
    /// "zram_rs stream": a borrowed compression stream, held across work that may sleep (the
    /// wait type of a mutex).
    Stream,
    /// "zram_rs reader": a borrowed decompression context, held across a slot lock's wait (the
    /// wait type of a mutex).
    Reader,
}

/// One lockdep lock instance of a [`LockClass`].
///
/// # Invariants
///
/// With `CONFIG_DEBUG_LOCK_ALLOC`, `map` is a map made by `zram_rs_lock_map_new()`, owned by
/// this value and freed on drop.
pub(crate) struct LockdepMap {
    #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
    map: core::ptr::NonNull<ffi::LockdepMapRaw>,
}

// SAFETY: lockdep maps are used from any thread; lockdep serialises its own state.
unsafe impl Send for LockdepMap {}
// SAFETY: as above.
unsafe impl Sync for LockdepMap {}

impl LockdepMap {
    /// A new instance of `class`.
    pub(crate) fn new(class: LockClass) -> Result<Self> {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        {
            let class = match class {
                LockClass::Slot => ffi::ZRAM_RS_LOCK_SLOT,
                LockClass::Stream => ffi::ZRAM_RS_LOCK_STREAM,
                LockClass::Reader => ffi::ZRAM_RS_LOCK_READER,
            };
            // SAFETY: allocates and initialises a map; no preconditions.
            let map = unsafe { ffi::zram_rs_lock_map_new(class) };
            // INVARIANT: a non-NULL result is a fresh map owned by us.
            core::ptr::NonNull::new(map)
                .map(|map| Self { map })
                .ok_or(ENOMEM)
        }
        #[cfg(not(CONFIG_DEBUG_LOCK_ALLOC))]
        {
            let _ = class;
            Ok(Self {})
        }
    }

    /// Tells lockdep the lock is being taken (`try`: it was taken by a trylock).
    #[inline(always)]
    pub(crate) fn acquire(&self, r#try: bool) {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        // SAFETY: `map` is live (type invariant).
        unsafe {
            ffi::zram_rs_lock_map_acquire(self.map.as_ptr(), r#try.into())
        };
        #[cfg(not(CONFIG_DEBUG_LOCK_ALLOC))]
        let _ = r#try;
    }

    /// Tells lockdep the lock is released.
    #[inline(always)]
    pub(crate) fn release(&self) {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        // SAFETY: `map` is live (type invariant).
        unsafe {
            ffi::zram_rs_lock_map_release(self.map.as_ptr())
        };
    }

    /// Tells lockdep the lock may be waited for here, with the locks now held (the kernel's
    /// `might_lock()`): an acquisition released at once.
    #[inline(always)]
    pub(crate) fn might_wait(&self) {
        self.acquire(false);
        self.release();
    }
}

impl Drop for LockdepMap {
    fn drop(&mut self) {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        // SAFETY: `map` is owned (type invariant) and no lock of it is held: every guard borrows
        // the owner of this map.
        unsafe {
            ffi::zram_rs_lock_map_free(self.map.as_ptr())
        };
    }
}
