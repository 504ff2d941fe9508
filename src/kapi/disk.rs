// SPDX-License-Identifier: GPL-2.0
//! Bio-based gendisks with zram's queue limits, built from raw `kernel::bindings` because the
//! 6.12 Rust block layer offers only blk-mq: the block major ([`DiskDriver`]), the
//! `block_device_operations` trampolines that call a driver's safe [`DiskOps`], one owned disk
//! ([`GenDisk`]), a borrowed view of a disk ([`DiskRef`]) for capacity and open-state checks,
//! and exclusive claims of a disk ([`Claim`]).
//!
//! A disk carries the state its I/O path works on ([`DiskOps::Io`]), read without any lock
//! for each bio: it is published once ([`DiskRef::publish_io`]) and taken back only under a
//! [`Claim`], which exists only while nobody has the disk open and opens are refused. Bios
//! reach a driver only through an open block device, so none is in flight then (the rule C
//! zram's `reset` relies on as well).

use super::bio::{Bio, Op};
use super::bit_wait;
use super::debugfs;
use super::ffi;
use super::sysfs::AttributeGroups;
use core::fmt::Write;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::bindings;
use kernel::ffi::{c_int, c_ulong, c_void};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::ScopeGuard;

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
struct DiskData<T: DiskOps> {
    #[pin]
    ops: T,
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
    /// Whether a [`Claim`] exists (read under `open_mutex`, where it changes).
    fn is_claimed(&self) -> bool {
        self.claimed.load(Ordering::Relaxed) & CLAIMED != 0
    }

    /// The published I/O state.
    ///
    /// # Safety
    ///
    /// The caller runs for a bio or a swap notification of this disk, which holds the disk
    /// open for the whole call; the result is used only during the call.
    unsafe fn io<'a>(&self) -> Option<ArcBorrow<'a, T::Io>> {
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

/// A registered block major and the operations table its disks use; unregistered on drop.
///
/// # Invariants
///
/// `major` was returned by `register_blkdev(0, name)` and is not unregistered yet. `fops` is
/// never changed after construction.
pub(crate) struct DiskDriver<T: DiskOps> {
    fops: bindings::block_device_operations,
    major: u32,
    name: &'static CStr,
    _ops: PhantomData<T>,
}

// SAFETY: `fops` is immutable after construction (type invariant) and only read by the block
// layer; the remaining fields are plain values.
unsafe impl<T: DiskOps> Send for DiskDriver<T> {}
// SAFETY: as above.
unsafe impl<T: DiskOps> Sync for DiskDriver<T> {}

impl<T: DiskOps> DiskDriver<T> {
    /// Registers a dynamic block major called `name` (as shown in `/proc/devices`).
    pub(crate) fn register(module: &'static ThisModule, name: &'static CStr) -> Result<Arc<Self>> {
        // SAFETY: `name` is a static NUL-terminated string; major 0 asks for a dynamic one.
        let major = unsafe { bindings::__register_blkdev(0, name.as_char_ptr(), None) };
        if major < 0 {
            return Err(Error::from_errno(major));
        }
        let fops = bindings::block_device_operations {
            submit_bio: Some(submit_bio_callback::<T>),
            open: Some(open_callback::<T>),
            swap_slot_free_notify: Some(swap_slot_free_notify_callback::<T>),
            // Pins the module while one of its disks is open.
            owner: module.as_ptr(),
            ..Default::default()
        };
        // INVARIANT: `major` was just registered.
        let driver = Self {
            fops,
            major: major as u32,
            name,
            _ops: PhantomData,
        };
        Arc::new(driver, GFP_KERNEL).map_err(Into::into)
    }
}

impl<T: DiskOps> Drop for DiskDriver<T> {
    fn drop(&mut self) {
        // SAFETY: registered in `register` (type invariant) and unregistered only here. Every
        // disk holds an `Arc` of the driver, so none is left.
        unsafe { bindings::unregister_blkdev(self.major, self.name.as_char_ptr()) };
    }
}

/// zram's logical block size on every page size (`ZRAM_LOGICAL_BLOCK_SIZE`).
const LOGICAL_BLOCK_SIZE: u32 = 4096;
const _: () = assert!(
    ffi::c::HAVE_ZRAM_DRV_H == 0 || LOGICAL_BLOCK_SIZE as i64 == ffi::c::ZRAM_LOGICAL_BLOCK_SIZE
);

/// A disk added to the system, owning the driver data its callbacks receive.
///
/// # Invariants
///
/// `raw` is a gendisk that was added with `device_add_disk()` and whose `private_data` points to
/// `*data` and `fops` to `driver.fops`; both outlive the disk's deletion, because `Drop` deletes
/// the disk before the fields are dropped. (The gendisk object itself may be released later,
/// by the last holder of a reference; that release reads only `fops->free_disk`, which is NULL
/// and in the table the registry's driver keeps until the module's exit, as C's static table.)
pub(crate) struct GenDisk<T: DiskOps> {
    raw: NonNull<bindings::gendisk>,
    data: Pin<KBox<DiskData<T>>>,
    /// Keeps the operations table and the major alive while the disk exists.
    _driver: Arc<DiskDriver<T>>,
    /// The disk's debugfs directory, whose file reads `data`; removed first on drop, and
    /// never shared.
    debugfs: Option<debugfs::RecordsDir>,
}

// SAFETY: the gendisk may be used and deleted from any thread; `T` is `Send + Sync`.
unsafe impl<T: DiskOps> Send for GenDisk<T> {}
// SAFETY: shared access only reads the pointer or calls thread-safe block layer functions.
unsafe impl<T: DiskOps> Sync for GenDisk<T> {}

/// Writes a formatted name into a `disk_name` array, always leaving a terminating NUL.
struct NameWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for NameWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &byte in s.as_bytes() {
            if self.len + 1 >= self.buf.len() {
                return Err(core::fmt::Error);
            }
            self.buf[self.len] = byte;
            self.len += 1;
        }
        Ok(())
    }
}

/// A gendisk allocated and not added yet, freed (`put_disk()`) by a guard unless
/// [`UnaddedDisk::add`] adds it.
///
/// # Invariants
///
/// The guard holds a gendisk from `blk_alloc_disk()` that nobody else sees and that was not
/// added; its cleanup function frees it.
struct UnaddedDisk(ScopeGuard<NonNull<bindings::gendisk>, fn(NonNull<bindings::gendisk>)>);

impl UnaddedDisk {
    /// Allocates a gendisk with zram's queue limits (see [`GenDisk::add`]).
    fn alloc() -> Result<Self> {
        let page = bindings::PAGE_SIZE as u32;
        let mut limits = bindings::queue_limits {
            logical_block_size: LOGICAL_BLOCK_SIZE,
            physical_block_size: page,
            io_min: page,
            io_opt: page,
            max_hw_discard_sectors: u32::MAX,
            // A discard frees whole pages only, so with blocks smaller than a page it cannot
            // promise zeroes: C zram offers write-zeroes only when the two sizes agree.
            max_write_zeroes_sectors: if page == LOGICAL_BLOCK_SIZE {
                u32::MAX
            } else {
                0
            },
            features: ffi::BLK_FEAT_STABLE_WRITES | ffi::BLK_FEAT_SYNCHRONOUS,
            ..Default::default()
        };
        // SAFETY: `limits` is a valid `queue_limits` (zero means "default" for the rest),
        // read during the call only.
        let raw = unsafe { ffi::zram_rs_blk_alloc_disk(&mut limits, bindings::NUMA_NO_NODE) };
        let raw = NonNull::new(kernel::error::from_err_ptr(raw)?).ok_or(ENOMEM)?;
        let free: fn(NonNull<bindings::gendisk>) = |raw| {
            // SAFETY: a gendisk that was never added and that only this guard holds.
            unsafe { bindings::put_disk(raw.as_ptr()) }
        };
        // INVARIANT: a fresh gendisk, not added, with the guard that frees it.
        Ok(Self(ScopeGuard::new_with_data(raw, free)))
    }

    /// The gendisk, to be set up.
    fn gendisk(&mut self) -> &mut bindings::gendisk {
        // SAFETY: a live gendisk that only this value sees (type invariant), borrowed for as
        // long as `self` is.
        unsafe { &mut *self.0.as_ptr() }
    }

    /// Writes the disk's name (`EINVAL` if it does not fit).
    fn set_name(&mut self, name: core::fmt::Arguments<'_>) -> Result {
        let mut writer = NameWriter {
            buf: &mut self.gendisk().disk_name,
            len: 0,
        };
        writer.write_fmt(name).map_err(|_| EINVAL)
    }

    /// Makes it minor `minor` of `driver`'s major, without partitions, with `driver`'s
    /// operations and `data` as the driver data its callbacks receive.
    fn set_device<T: DiskOps>(
        &mut self,
        driver: &DiskDriver<T>,
        minor: u32,
        data: &Pin<KBox<DiskData<T>>>,
    ) {
        let disk = self.gendisk();
        disk.major = driver.major as c_int;
        disk.first_minor = minor as c_int;
        disk.minors = 1;
        disk.flags |= bindings::GENHD_FL_NO_PART as c_int;
        disk.fops = &driver.fops;
        disk.private_data = core::ptr::from_ref::<DiskData<T>>(data)
            .cast_mut()
            .cast::<c_void>();
    }

    /// Adds the disk with the attribute `groups`; on failure the guard frees it.
    fn add<T: DiskOps>(
        self,
        groups: &'static AttributeGroups<T>,
    ) -> Result<NonNull<bindings::gendisk>> {
        let raw = *self.0;
        // SAFETY: a fully set up, not yet added disk; `groups` is a static NULL-terminated list.
        let ret = unsafe {
            bindings::device_add_disk(core::ptr::null_mut(), raw.as_ptr(), groups.as_ptr())
        };
        if ret != 0 {
            // `self` drops here: the guard frees the disk, which adding left only ours.
            return Err(Error::from_errno(ret));
        }
        // Added: from now the disk is `GenDisk`'s, deleted by its `Drop`.
        Ok(self.0.dismiss())
    }
}

impl<T: DiskOps> GenDisk<T> {
    /// Allocates and adds a zram-style disk: bio-based, 4 KiB logical blocks and page-sized
    /// physical blocks (as C zram on every page size), discard, write-zeroes where a page is
    /// 4 KiB, synchronous and stable writes, no partitions, capacity 0.
    ///
    /// Built in steps ([`UnaddedDisk`]): until `device_add_disk()` succeeds, a guard frees
    /// the half-built gendisk on every error.
    pub(crate) fn add(
        driver: &Arc<DiskDriver<T>>,
        minor: u32,
        name: core::fmt::Arguments<'_>,
        ops: impl PinInit<T>,
        groups: &'static AttributeGroups<T>,
    ) -> Result<Self> {
        let data = KBox::pin_init(
            pin_init!(DiskData {
                ops <- ops,
                io: AtomicPtr::new(core::ptr::null_mut()),
                claimed: AtomicU32::new(0),
            }),
            GFP_KERNEL,
        )?;
        let mut disk = UnaddedDisk::alloc()?;
        disk.set_name(name)?;
        disk.set_device(driver, minor, &data);
        let raw = disk.add(groups)?;
        // INVARIANT: added, with `private_data` and `fops` pointing into fields of `Self`.
        Ok(Self {
            raw,
            data,
            _driver: driver.clone(),
            debugfs: None,
        })
    }

    /// The driver data.
    pub(crate) fn data(&self) -> &T {
        &self.data.ops
    }

    /// Adds debugfs directory `name` in `parent`, holding a read-only file `file` whose reads
    /// the disk's data serves; both go with the disk. Nothing without debugfs (as C).
    pub(crate) fn add_debugfs(&mut self, parent: &Arc<debugfs::Dir>, name: &CStr, file: &CStr)
    where
        T: debugfs::Records,
    {
        let data: *const T = &self.data.ops;
        // SAFETY: `data` is pinned in its box, which lives as long as `self`; the directory is
        // kept only in `self.debugfs`, which `Drop` empties before anything else.
        self.debugfs = unsafe { debugfs::RecordsDir::new(name, parent, file, data) };
    }

    /// A view of the disk.
    pub(crate) fn disk(&self) -> DiskRef<'_, T> {
        // INVARIANT: the disk is live while `self` is borrowed, with `self.data` behind it.
        DiskRef {
            raw: self.raw,
            data: &self.data,
        }
    }
}

impl<T: DiskOps> Drop for GenDisk<T> {
    fn drop(&mut self) {
        // The debugfs file first: its removal waits for running reads of `data`.
        self.debugfs = None;
        // SAFETY: the disk was added (type invariant). `del_gendisk` removes it and its sysfs
        // attributes, waiting for running attribute callbacks; afterwards no callback can reach
        // `data`, which is dropped after this function.
        unsafe {
            bindings::del_gendisk(self.raw.as_ptr());
            bindings::put_disk(self.raw.as_ptr());
        }
    }
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
    /// The disk and driver data behind one of the disk's sysfs attribute callbacks.
    ///
    /// # Safety
    ///
    /// `dev` is the `struct device` of a disk added by [`GenDisk::add`] with driver data `T`,
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

/// The data of a disk a callback belongs to.
///
/// # Safety
///
/// `disk` is a live gendisk added by [`GenDisk::add`] with driver data `T`, and stays added
/// for `'a`.
unsafe fn driver_data<'a, T: DiskOps>(disk: *mut bindings::gendisk) -> &'a DiskData<T> {
    // SAFETY: `private_data` points to the pinned `DiskData<T>`, which outlives the disk
    // (invariant of `GenDisk`).
    unsafe { &*((*disk).private_data as *const DiskData<T>) }
}

/// `block_device_operations.submit_bio`.
///
/// # Safety
///
/// Called by the block layer with a live bio for a disk added by [`GenDisk::add`] with `T`.
unsafe extern "C" fn submit_bio_callback<T: DiskOps>(bio: *mut bindings::bio) {
    // SAFETY: the block layer passes a live bio for one of our disks and gives it to us until we
    // call `bio_endio`.
    let bdev = unsafe { (*bio).bi_bdev };
    // SAFETY: the bio's disk is one of ours.
    let data = unsafe { driver_data::<T>((*bdev).bd_disk) };
    // SAFETY: the bio's submitter holds the disk open until the bio completes, below.
    let io = unsafe { data.io() };
    // SAFETY: the bio is live and ours until `bio_endio` below; `wrapped` is not used after it.
    let mut wrapped = unsafe { Bio::from_raw(NonNull::new_unchecked(bio)) };
    let result = match wrapped.op() {
        Op::Read => {
            let read = || io.map_or(Err(EIO), |io| data.ops.read(io, &mut wrapped));
            // SAFETY: `bio` is live and being handled here.
            unsafe { accounted(bio, read) }
        }
        Op::Write => {
            let write = || io.map_or(Err(EIO), |io| data.ops.write(&io, &wrapped));
            // SAFETY: as above.
            unsafe { accounted(bio, write) }
        }
        Op::Discard | Op::WriteZeroes => io.map_or(Err(EIO), |io| {
            data.ops.discard(&io, wrapped.start_byte(), wrapped.len());
            Ok(())
        }),
        Op::Other => Err(super::eopnotsupp()),
    };
    let status = match result {
        Ok(()) => ffi::BLK_STS_OK,
        Err(e) if e == super::eopnotsupp() => ffi::BLK_STS_NOTSUPP,
        Err(_) => ffi::BLK_STS_IOERR,
    };
    // Only an error is stored, as C zram does: the status belongs to whoever ends the bio
    // with an error, reads chained to it (`bdev.rs`) included.
    if status != ffi::BLK_STS_OK {
        // SAFETY: the bio is still ours (`wrapped` only borrowed it).
        unsafe { (*bio).bi_status = status };
    }
    // SAFETY: as above; `bio_endio` gives it back.
    unsafe { bindings::bio_endio(bio) };
}

/// Runs `f`, the handling of a read or write bio, inside the disk's I/O accounting
/// (`/sys/block/<disk>/stat`, as C zram does).
///
/// # Safety
///
/// `bio` is a live bio that [`submit_bio_callback`] is handling and has not completed.
#[inline(always)]
unsafe fn accounted(bio: *mut bindings::bio, f: impl FnOnce() -> Result) -> Result {
    // SAFETY: `bio` is live (guaranteed by the caller).
    let start = unsafe { bindings::bio_start_io_acct(bio) };
    let result = f();
    // SAFETY: as above; `start` came from `bio_start_io_acct` for this bio.
    unsafe { bindings::bio_end_io_acct_remapped(bio, start, (*bio).bi_bdev) };
    result
}

/// `block_device_operations.open`.
///
/// # Safety
///
/// Called by the block layer for a live disk added by [`GenDisk::add`] with `T`.
unsafe extern "C" fn open_callback<T: DiskOps>(
    disk: *mut bindings::gendisk,
    _mode: bindings::blk_mode_t,
) -> c_int {
    // SAFETY: the block layer calls `open` on one of our live disks, with `open_mutex` held.
    let data = unsafe { driver_data::<T>(disk) };
    if data.is_claimed() {
        EBUSY.to_errno()
    } else {
        0
    }
}

/// `block_device_operations.swap_slot_free_notify`.
///
/// # Safety
///
/// Called by swap for an open block device of a disk added by [`GenDisk::add`] with `T`.
unsafe extern "C" fn swap_slot_free_notify_callback<T: DiskOps>(
    bdev: *mut bindings::block_device,
    index: c_ulong,
) {
    // SAFETY: swap calls this for a block device of one of our live disks, which swap holds
    // open during the call.
    let (data, io) = unsafe {
        let data = driver_data::<T>((*bdev).bd_disk);
        (data, data.io())
    };
    data.ops.swap_slot_free_notify(io.as_deref(), index);
}
