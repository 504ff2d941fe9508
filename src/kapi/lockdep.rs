// SPDX-License-Identifier: GPL-2.0
//! A lockdep map for a lock lockdep cannot see by itself (the slot table's bit locks), so that
//! the debug kernel checks that lock's ordering against every other lock, as C zram upstream
//! does for its slot locks. The map and its class key live in `shim.c` (lockdep's acquire and
//! release are macros). Without `CONFIG_DEBUG_LOCK_ALLOC` the type is empty and its methods
//! do nothing.

#[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
use super::ffi;
use kernel::prelude::*;

/// One lockdep lock instance, of the class "zram_rs slot".
///
/// # Invariants
///
/// With `CONFIG_DEBUG_LOCK_ALLOC`, `map` is a map made by `zram_rs_slot_map_new()`, owned by
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
    /// A new instance of the slot lock class.
    pub(crate) fn new() -> Result<Self> {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        {
            // SAFETY: allocates and initialises a map; no preconditions.
            let map = unsafe { ffi::zram_rs_slot_map_new() };
            // INVARIANT: a non-NULL result is a fresh map owned by us.
            core::ptr::NonNull::new(map)
                .map(|map| Self { map })
                .ok_or(ENOMEM)
        }
        #[cfg(not(CONFIG_DEBUG_LOCK_ALLOC))]
        Ok(Self {})
    }

    /// Tells lockdep the lock is being taken (`try`: it was taken by a trylock).
    #[inline(always)]
    pub(crate) fn acquire(&self, r#try: bool) {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        // SAFETY: `map` is live (type invariant).
        unsafe {
            ffi::zram_rs_slot_map_acquire(self.map.as_ptr(), r#try.into())
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
            ffi::zram_rs_slot_map_release(self.map.as_ptr())
        };
    }
}

impl Drop for LockdepMap {
    fn drop(&mut self) {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        // SAFETY: `map` is owned (type invariant) and no lock of it is held: every guard borrows
        // the owner of this map.
        unsafe {
            ffi::zram_rs_slot_map_free(self.map.as_ptr())
        };
    }
}
