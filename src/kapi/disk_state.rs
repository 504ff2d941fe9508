// SPDX-License-Identifier: GPL-2.0
//! A disk's state as its callbacks and its owner see it: what a driver does for the callbacks
//! ([`DiskOps`]), the data a disk's `private_data` points to (`DiskData`: the driver's data, the
//! I/O state published for the I/O path, the claim word), a borrowed view of a live disk
//! ([`DiskRef`]) for capacity and open-state checks, and exclusive claims of a disk
//! ([`Claim`]), which a `hot_remove` waits for on the claim word when a `reset` holds one.
//! The disk itself, its block major and its callbacks are `disk.rs`'s.
//!
//! A disk carries the state its I/O path works on ([`DiskOps::Io`]), read without any lock
//! for each bio: it is published once ([`DiskRef::publish_io`]) and taken back only under a
//! [`Claim`], which exists only while nobody has the disk open and opens are refused. Bios
//! reach a driver only through an open block device, so none is in flight then (the rule C
//! zram's `reset` relies on as well).

use super::bio::Bio;
use super::bit_wait;
use super::ffi;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

/// What a driver does for the callbacks of its disks.
pub(crate) trait DiskOps: Send + Sync + Sized {
    /// The state the I/O path works on while the disk is set up.
    type Io: Send + Sync;
    /// Reads a bio's data from the disk into the bio's buffers. The error, if any, becomes the
    /// bio's status. (Without published I/O state, reads and writes fail with `EIO`.)
    /// `io` may be kept (as an `Arc`) for work that ends the bio later.
    fn read(&self, io: ArcBorrow<'_, Self::Io>, bio: &mut Bio<'_>) -> Result;
    /// Writes a bio's data to the disk; as [`DiskOps::read`].
    fn write(&self, io: &Self::Io, bio: &Bio<'_>) -> Result;
    /// Discards `len` bytes from byte `start` (also for write-zeroes bios: what is discarded
    /// reads back as zeros).
    fn discard(&self, io: &Self::Io, start: u64, len: u64);
    /// Swap no longer needs the page at `index`. Called in atomic context: must not sleep.
    fn swap_slot_free_notify(&self, io: Option<&Self::Io>, index: usize);
}

/// What a disk's `private_data` points to: the driver's data and the disk's I/O state.
///
/// # Invariants
///
/// `io` is null or a pointer from `Arc::into_raw` whose reference it owns. It becomes non-null
/// only in [`DiskRef::publish_io`] and null again only in [`Claim::take_io`] or on drop.
/// `claimed`'s [`CLAIMED`] bit changes only under the disk's `open_mutex`, and is set only
/// while the disk has no openers; its [`CLAIM_WAITERS`] bit is set by whoever waits for a
/// claim's end, and cleared with [`CLAIMED`].
#[pin_data(PinnedDrop)]
pub(super) struct DiskData<T: DiskOps> {
    #[pin]
    pub(super) ops: T,
    io: AtomicPtr<T::Io>,
    /// [`CLAIMED`]: opens fail with `EBUSY`; [`CLAIM_WAITERS`]: somebody sleeps until the
    /// claim ends ([`DiskRef::claim_for_removal`]).
    claimed: AtomicU32,
}

/// The bit of [`DiskData`]'s `claimed` word set while a [`Claim`] exists.
const CLAIMED: u32 = 1;
/// The bit of [`DiskData`]'s `claimed` word that says somebody waits for the claim's end.
const CLAIM_WAITERS: u32 = 2;

#[pinned_drop]
impl<T: DiskOps> PinnedDrop for DiskData<T> {
    fn drop(self: Pin<&mut Self>) {
        let io = self.io.swap(core::ptr::null_mut(), Ordering::Acquire);
        if !io.is_null() {
            // SAFETY: a non-null `io` owns a reference from `Arc::into_raw` (type invariant),
            // given up here; the disk is deleted, so no callback uses it any more.
            drop(unsafe { Arc::from_raw(io) });
        }
    }
}

impl<T: DiskOps> DiskData<T> {
    /// The data of a new disk: the driver's `ops`, nothing published, not claimed.
    pub(super) fn new(ops: impl PinInit<T>) -> impl PinInit<Self> {
        pin_init!(Self {
            ops <- ops,
            io: AtomicPtr::new(core::ptr::null_mut()),
            claimed: AtomicU32::new(0),
        })
    }

    /// Whether a [`Claim`] exists (read under `open_mutex`, where it changes).
    pub(super) fn is_claimed(&self) -> bool {
        self.claimed.load(Ordering::Relaxed) & CLAIMED != 0
    }

    /// The published I/O state.
    ///
    /// # Safety
    ///
    /// The caller runs for a bio or a swap notification of this disk, which holds the disk
    /// open for the whole call; the result is used only during the call.
    pub(super) unsafe fn io<'a>(&self) -> Option<ArcBorrow<'a, T::Io>> {
        let io = self.io.load(Ordering::Acquire);
        if io.is_null() {
            return None;
        }
        // SAFETY: a non-null `io` is a live `Arc` (from `Arc::into_raw`) that only a `Claim`
        // can take away (type invariant); a claim needs the disk to have no openers, and the
        // caller's disk is open until the call ends.
        Some(unsafe { ArcBorrow::from_raw(io) })
    }
}

/// The data of a disk a callback belongs to.
///
/// # Safety
///
/// `disk` is a live gendisk added by `GenDisk::add` with driver data `T`, and stays added
/// for `'a`.
pub(super) unsafe fn driver_data<'a, T: DiskOps>(disk: *mut bindings::gendisk) -> &'a DiskData<T> {
    // SAFETY: `private_data` points to the pinned `DiskData<T>`, which outlives the disk
    // (invariant of `GenDisk`).
    unsafe { &*((*disk).private_data as *const DiskData<T>) }
}

/// A borrowed, live gendisk of driver `T`.
///
/// # Invariants
///
/// `raw` points to a gendisk that stays added for `'a`, whose `private_data` is `data`.
pub(crate) struct DiskRef<'a, T: DiskOps> {
    raw: NonNull<bindings::gendisk>,
    data: &'a DiskData<T>,
}

impl<T: DiskOps> Clone for DiskRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: DiskOps> Copy for DiskRef<'_, T> {}

impl<'a, T: DiskOps> DiskRef<'a, T> {
    /// A view of the disk `raw`, whose driver data is `data`.
    ///
    /// # Safety
    ///
    /// `raw` is a gendisk added by `GenDisk::add` that stays added for `'a`, with `data` as its
    /// `private_data`.
    pub(super) unsafe fn new(raw: NonNull<bindings::gendisk>, data: &'a DiskData<T>) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self { raw, data }
    }

    /// The disk and driver data behind one of the disk's sysfs attribute callbacks.
    ///
    /// # Safety
    ///
    /// `dev` is the `struct device` of a disk added by `GenDisk::add` with driver data `T`,
    /// and the call happens inside a sysfs callback of that device (so it stays added for `'a`).
    pub(crate) unsafe fn from_sysfs_device(dev: *mut bindings::device) -> (Self, &'a T) {
        // SAFETY: a disk's device is its `part0->bd_device` (`dev_to_disk()`); `private_data`
        // was set to the pinned `DiskData<T>` by `GenDisk::add`, which outlives the attribute
        // callbacks.
        unsafe {
            let bdev = kernel::container_of!(dev, bindings::block_device, bd_device);
            let raw = (*bdev).bd_disk;
            let data = driver_data::<T>(raw);
            // INVARIANT: the disk stays added while its attribute callback runs.
            (
                Self {
                    raw: NonNull::new_unchecked(raw),
                    data,
                },
                &data.ops,
            )
        }
    }

    /// Publishes the I/O state that bios of this disk get from now on. Gives `io` back if
    /// one is already published.
    pub(crate) fn publish_io(&self, io: Arc<T::Io>) -> core::result::Result<(), Arc<T::Io>> {
        let raw = Arc::into_raw(io).cast_mut();
        match self.data.io.compare_exchange(
            core::ptr::null_mut(),
            raw,
            Ordering::Release,
            Ordering::Relaxed,
        ) {
            // INVARIANT: `io` now owns the reference from `into_raw`.
            Ok(_) => Ok(()),
            // SAFETY: `raw` came from `Arc::into_raw` just above and was not stored.
            Err(_) => Err(unsafe { Arc::from_raw(raw) }),
        }
    }

    /// Claims the disk exclusively: `EBUSY` while anyone has it open or another claim exists.
    /// Until the claim is dropped, opens fail with `EBUSY`.
    pub(crate) fn claim(&self) -> Result<Claim<'a, T>> {
        self.with_open_mutex(|openers| {
            if openers > 0 || self.data.is_claimed() {
                return Err(EBUSY);
            }
            // INVARIANT: set under `open_mutex` with no openers.
            self.data.claimed.fetch_or(CLAIMED, Ordering::Relaxed);
            // INVARIANT: this thread just set `claimed`.
            Ok(Claim { disk: *self })
        })
    }

    /// Claims the disk for its removal, deciding under one hold of `open_mutex`: `EBUSY` while
    /// anyone has it open, otherwise a new claim. Another claim (a running `reset`) is waited
    /// for and the decision taken again afterwards, so that no open can slip in between that
    /// claim's end and the disk's deletion.
    pub(crate) fn claim_for_removal(&self) -> Result<Claim<'a, T>> {
        loop {
            let decided = self.with_open_mutex(|openers| {
                if openers > 0 {
                    return Some(Err(EBUSY));
                }
                if self.data.is_claimed() {
                    return None;
                }
                // INVARIANT: set under `open_mutex` with no openers.
                self.data.claimed.fetch_or(CLAIMED, Ordering::Relaxed);
                // INVARIANT: this thread just set `claimed`.
                Some(Ok(Claim { disk: *self }))
            });
            if let Some(result) = decided {
                return result;
            }
            // Sleeps until that claim's drop wakes it (no lock of this disk is held).
            bit_wait::wait_while_set(&self.data.claimed, CLAIMED, CLAIM_WAITERS);
        }
    }

    /// Zeroes the disk's I/O statistics (`/sys/block/<disk>/stat`), as C zram's `reset`.
    pub(crate) fn clear_io_stats(&self) {
        // SAFETY: live disk (type invariant); `part0` exists for its whole life.
        unsafe { ffi::zram_rs_part_stat_clear(self.raw.as_ptr()) };
    }

    /// Sets the capacity in 512-byte sectors and tells user space (a `change` uevent).
    pub(crate) fn set_capacity_sectors(&self, sectors: u64) {
        // SAFETY: live disk (type invariant).
        unsafe { bindings::set_capacity_and_notify(self.raw.as_ptr(), sectors) };
    }

    /// Runs `f` with the disk's `open_mutex` held, passing the number of openers.
    pub(crate) fn with_open_mutex<R>(&self, f: impl FnOnce(u32) -> R) -> R {
        // SAFETY: live disk (type invariant); the mutex is released right after `f`.
        unsafe {
            ffi::zram_rs_lock_open_mutex(self.raw.as_ptr());
            let result = f(ffi::zram_rs_disk_openers(self.raw.as_ptr()));
            ffi::zram_rs_unlock_open_mutex(self.raw.as_ptr());
            result
        }
    }

    /// Writes back dirty page-cache pages of the whole disk (`sync_blockdev(part0)`).
    pub(crate) fn sync(&self) {
        // SAFETY: live disk (type invariant); `part0` exists for its whole life.
        unsafe { bindings::sync_blockdev((*self.raw.as_ptr()).part0) };
    }
}

/// An exclusive claim of a disk (see [`DiskRef::claim`]), released on drop.
///
/// # Invariants
///
/// The claiming thread set `disk`'s `claimed` flag and nobody else clears it until this is
/// dropped: the disk has no openers for the claim's whole life. With no openers, no bio of the
/// disk is in flight and none can start: bios come only through an open block device. That
/// is the block layer's guarantee, not this type's (C zram's `reset` relies on it the same
/// way), and what makes [`Claim::take_io`] sound.
pub(crate) struct Claim<'a, T: DiskOps> {
    disk: DiskRef<'a, T>,
}

impl<'a, T: DiskOps> Claim<'a, T> {
    /// The claimed disk.
    pub(crate) fn disk(&self) -> DiskRef<'a, T> {
        self.disk
    }

    /// Takes back the published I/O state: with no openers, no bio or swap notification can
    /// be using it.
    pub(crate) fn take_io(&self) -> Option<Arc<T::Io>> {
        let io = self
            .disk
            .data
            .io
            .swap(core::ptr::null_mut(), Ordering::Acquire);
        // SAFETY: a non-null `io` owns a reference from `Arc::into_raw` (invariant of
        // `DiskData`), handed over here now that the slot is null.
        (!io.is_null()).then(|| unsafe { Arc::from_raw(io) })
    }

    /// Keeps the disk claimed until it is deleted (for removal: no open may slip in between).
    pub(crate) fn keep_until_deleted(self) {
        core::mem::forget(self);
    }
}

impl<T: DiskOps> Drop for Claim<'_, T> {
    fn drop(&mut self) {
        let data = self.disk.data;
        // Clears the waiters bit too; acquiring, so that a sleeper's queueing is seen by the
        // wake.
        let old = self
            .disk
            .with_open_mutex(|_| data.claimed.swap(0, Ordering::AcqRel));
        if old & CLAIM_WAITERS != 0 {
            bit_wait::wake_waiters(&data.claimed);
        }
    }
}
