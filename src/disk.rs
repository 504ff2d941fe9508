// SPDX-License-Identifier: GPL-2.0
//! Bio-based gendisks with zram's queue limits, built from raw `kernel::bindings` because the
//! 6.12 Rust block layer offers only blk-mq: the block major ([`DiskDriver`]), the
//! `block_device_operations` trampolines that call a driver's safe [`DiskOps`], one owned disk
//! ([`GenDisk`]) and a borrowed view of a disk ([`DiskRef`]) for capacity and open-state checks.

use crate::bio::{Bio, Op};
use crate::ffi;
use crate::sysfs::AttributeGroups;
use core::fmt::Write;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::ffi::{c_int, c_ulong, c_void};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;

/// What a driver does for the callbacks of its disks.
pub(crate) trait DiskOps: Send + Sync + Sized {
    /// A process opens the disk (`open_mutex` held). An error refuses the open.
    fn open(&self) -> Result;
    /// Handles a bio; the error, if any, becomes the bio's status.
    fn submit_bio(&self, bio: &mut Bio<'_>) -> Result;
    /// Swap no longer needs the page at `index`. Called in atomic context: must not sleep.
    fn swap_slot_free_notify(&self, index: usize);
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

/// Lockdep class of the disks' queues (what the `blk_alloc_disk()` macro declares per call
/// site). `kernel::static_lock_class!` cannot be used out of tree on 6.12.
// SAFETY: an all-zero `lock_class_key` is how C's static keys start out.
static mut DISK_LOCK_KEY: bindings::lock_class_key = unsafe { core::mem::zeroed() };

/// A disk added to the system, owning the driver data its callbacks receive.
///
/// # Invariants
///
/// `raw` is a gendisk that was added with `device_add_disk()` and whose `private_data` points to
/// `*data` and `fops` to `driver.fops`; both outlive the disk because `Drop` deletes the disk
/// before the fields are dropped.
pub(crate) struct GenDisk<T: DiskOps> {
    raw: NonNull<bindings::gendisk>,
    data: Pin<KBox<T>>,
    /// Keeps the operations table and the major alive while the disk exists.
    _driver: Arc<DiskDriver<T>>,
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

impl<T: DiskOps> GenDisk<T> {
    /// Allocates and adds a zram-style disk: bio-based, 4 KiB logical blocks, discard and
    /// write-zeroes, synchronous and stable writes, no partitions, capacity 0.
    pub(crate) fn add(
        driver: &Arc<DiskDriver<T>>,
        minor: u32,
        name: core::fmt::Arguments<'_>,
        data: Pin<KBox<T>>,
        groups: &'static AttributeGroups,
    ) -> Result<Self> {
        let page = bindings::PAGE_SIZE as u32;
        let mut limits = bindings::queue_limits {
            logical_block_size: page,
            physical_block_size: page,
            io_min: page,
            io_opt: page,
            max_hw_discard_sectors: u32::MAX,
            max_write_zeroes_sectors: u32::MAX,
            features: ffi::BLK_FEAT_STABLE_WRITES | ffi::BLK_FEAT_SYNCHRONOUS,
            ..Default::default()
        };
        // SAFETY: `limits` is a valid `queue_limits` (zero means "default" for the rest); the
        // lock class key is a static that lives as long as the module.
        let raw = unsafe {
            bindings::__blk_alloc_disk(&mut limits, bindings::NUMA_NO_NODE, &raw mut DISK_LOCK_KEY)
        };
        let raw = NonNull::new(kernel::error::from_err_ptr(raw)?).ok_or(ENOMEM)?;
        // SAFETY: `raw` is a fresh gendisk nobody else sees yet.
        let disk = unsafe { &mut *raw.as_ptr() };
        let mut writer = NameWriter {
            buf: &mut disk.disk_name,
            len: 0,
        };
        if writer.write_fmt(name).is_err() {
            // SAFETY: the disk was never added; `put_disk` frees it.
            unsafe { bindings::put_disk(raw.as_ptr()) };
            return Err(EINVAL);
        }
        disk.major = driver.major as c_int;
        disk.first_minor = minor as c_int;
        disk.minors = 1;
        disk.flags |= bindings::GENHD_FL_NO_PART as c_int;
        disk.fops = &driver.fops;
        disk.private_data = (&*data as *const T).cast_mut().cast::<c_void>();
        // SAFETY: a fully set up, not yet added disk; `groups` is a static NULL-terminated list.
        let ret = unsafe {
            bindings::device_add_disk(core::ptr::null_mut(), raw.as_ptr(), groups.as_ptr())
        };
        if ret != 0 {
            // SAFETY: adding failed, so the disk is only ours; `put_disk` frees it.
            unsafe { bindings::put_disk(raw.as_ptr()) };
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: added, with `private_data` and `fops` pointing into fields of `Self`.
        Ok(Self {
            raw,
            data,
            _driver: driver.clone(),
        })
    }

    /// The driver data.
    pub(crate) fn data(&self) -> &T {
        &self.data
    }

    /// A view of the disk.
    pub(crate) fn disk(&self) -> DiskRef<'_> {
        // INVARIANT: the disk is live while `self` is borrowed.
        DiskRef {
            raw: self.raw,
            _disk: PhantomData,
        }
    }
}

impl<T: DiskOps> Drop for GenDisk<T> {
    fn drop(&mut self) {
        // SAFETY: the disk was added (type invariant). `del_gendisk` removes it and its sysfs
        // attributes, waiting for running attribute callbacks; afterwards no callback can reach
        // `data`, which is dropped after this function.
        unsafe {
            bindings::del_gendisk(self.raw.as_ptr());
            bindings::put_disk(self.raw.as_ptr());
        }
    }
}

/// A borrowed, live gendisk.
///
/// # Invariants
///
/// `raw` points to a gendisk that stays added for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct DiskRef<'a> {
    raw: NonNull<bindings::gendisk>,
    _disk: PhantomData<&'a bindings::gendisk>,
}

impl<'a> DiskRef<'a> {
    /// The disk and driver data behind one of the disk's sysfs attribute callbacks.
    ///
    /// # Safety
    ///
    /// `dev` is the `struct device` of a disk added by [`GenDisk::add`] with driver data `T`,
    /// and the call happens inside a sysfs callback of that device (so it stays added for `'a`).
    pub(crate) unsafe fn from_sysfs_device<T: DiskOps>(
        dev: *mut bindings::device,
    ) -> (Self, &'a T) {
        // SAFETY: a disk's device is its `part0->bd_device` (`dev_to_disk()`); `private_data`
        // was set to the pinned `T` by `GenDisk::add`, which outlives the attribute callbacks.
        unsafe {
            let bdev = kernel::container_of!(dev, bindings::block_device, bd_device);
            let raw = (*bdev).bd_disk;
            let data = &*((*raw).private_data as *const T);
            // INVARIANT: the disk stays added while its attribute callback runs.
            (
                Self {
                    raw: NonNull::new_unchecked(raw),
                    _disk: PhantomData,
                },
                data,
            )
        }
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

/// The driver data of the disk a bio or block device belongs to.
///
/// # Safety
///
/// `disk` is a live gendisk added by [`GenDisk::add`] with driver data `T`.
unsafe fn driver_data<'a, T: DiskOps>(disk: *mut bindings::gendisk) -> &'a T {
    // SAFETY: `private_data` points to the pinned `T`, which outlives the disk (invariant of
    // `GenDisk`).
    unsafe { &*((*disk).private_data as *const T) }
}

/// `block_device_operations.submit_bio`.
///
/// # Safety
///
/// Called by the block layer with a live bio for a disk added by [`GenDisk::add`] with `T`.
unsafe extern "C" fn submit_bio_callback<T: DiskOps>(bio: *mut bindings::bio) {
    // SAFETY: the block layer passes a live bio for one of our disks and gives it to us until we
    // call `bio_endio`.
    unsafe {
        let bdev = (*bio).bi_bdev;
        let data = driver_data::<T>((*bdev).bd_disk);
        let (accounted, start, result) = {
            let mut wrapped = Bio::from_raw(NonNull::new_unchecked(bio));
            let accounted = matches!(wrapped.op(), Op::Read | Op::Write);
            let start = if accounted {
                bindings::bio_start_io_acct(bio)
            } else {
                0
            };
            (accounted, start, data.submit_bio(&mut wrapped))
        };
        if accounted {
            bindings::bio_end_io_acct_remapped(bio, start, bdev);
        }
        (*bio).bi_status = match result {
            Ok(()) => ffi::BLK_STS_OK,
            Err(e) if e == ffi::eopnotsupp() => ffi::BLK_STS_NOTSUPP,
            Err(_) => ffi::BLK_STS_IOERR,
        };
        bindings::bio_endio(bio);
    }
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
    // SAFETY: the block layer calls `open` on one of our live disks.
    let data = unsafe { driver_data::<T>(disk) };
    match data.open() {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
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
    // SAFETY: swap calls this for a block device of one of our live disks (swap holds it open).
    let data = unsafe { driver_data::<T>((*bdev).bd_disk) };
    data.swap_slot_free_notify(index);
}
