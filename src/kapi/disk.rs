// SPDX-License-Identifier: GPL-2.0
//! Bio-based gendisks with zram's queue limits, built from raw `kernel::bindings` because the
//! 6.12 Rust block layer offers only blk-mq: the block major ([`DiskDriver`]), one owned disk
//! ([`GenDisk`], built through `UnaddedDisk`, whose guard undoes a half-built one), and the
//! `block_device_operations` trampolines that call a driver's safe [`DiskOps`]. What a disk's
//! callbacks and owner share — its driver data, published I/O state and claims — is
//! `disk_state.rs`'s.

pub(crate) use super::disk_state::{Claim, DiskOps, DiskRef};

use super::bio::{Bio, Op};
use super::debugfs;
use super::disk_state::{driver_data, DiskData};
use super::ffi;
use super::sysfs::AttributeGroups;
use core::fmt::Write;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::ffi::{c_int, c_ulong, c_void};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;
use kernel::types::ScopeGuard;

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
        let data = KBox::pin_init(DiskData::new(ops), GFP_KERNEL)?;
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
        // SAFETY: the disk is added and live while `self` is borrowed, with `self.data` behind
        // it (type invariant).
        unsafe { DiskRef::new(self.raw, &self.data) }
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
