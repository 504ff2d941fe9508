// SPDX-License-Identifier: GPL-2.0
//! A backing block device: opened by path as C zram opens it (`filp_open()` with `O_RDWR |
//! O_LARGEFILE | O_EXCL`, so the open file holds the device exclusively), closed on drop; its
//! size in page-sized blocks and its path; and whole-page reads and writes of one block that
//! wait for the device.
//!
//! A thread inside a driver's `submit_bio` must not wait for a bio of its own: the block layer
//! only queues bios submitted there, until `submit_bio` returns. Three reads serve that context:
//! [`BackingDev::read_page_chained`] chains a read into a whole page of the request to the
//! request, which then completes after it (C zram's asynchronous read),
//! [`BackingDev::read_page_then`] does the same and then hands the page to a function in a
//! worker before the request completes (C 7.3's deferred decompression), and
//! [`read_page_waiting`] has a worker issue the bio and wait for it while the caller waits for
//! the worker (C zram 6.12's read of a partial page).

use super::bio::PageDest;
use super::bounce::BouncePage;
use super::{ffi, mem};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::error::from_err_ptr;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::types::Opaque;

const PAGE_SIZE: usize = bindings::PAGE_SIZE;
/// 512-byte sectors in a page.
const SECTORS_PER_PAGE: u64 = (PAGE_SIZE >> bindings::SECTOR_SHIFT) as u64;

/// An open file, closed on drop.
///
/// # Invariants
///
/// `file` is a file opened by `filp_open()` and owned by this value; `block` only if it is a
/// block device file.
struct OpenFile {
    file: NonNull<bindings::file>,
    block: bool,
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        if self.block {
            // SAFETY: the file is an open block device file and ours (type invariant); put
            // once, here. The exclusive claim is given up now, before this returns: the final
            // close is deferred to the task's return to user space (C's `filp_close()` keeps
            // the claim until then), so another opener right after a `reset` finds the device
            // free.
            unsafe { bindings::bdev_fput(self.file.as_ptr()) };
        } else {
            // SAFETY: the file is open and ours (type invariant); closed once, here.
            unsafe { bindings::filp_close(self.file.as_ptr(), core::ptr::null_mut()) };
        }
    }
}

/// A block device opened exclusively as a zram backing device.
///
/// # Invariants
///
/// `file` is an open file of a block device and `bdev` that device, which stays valid while the
/// file is open; `pages` is its size in whole pages, at least 1.
pub(crate) struct BackingDev {
    file: OpenFile,
    bdev: NonNull<bindings::block_device>,
    pages: usize,
}

// SAFETY: the file and the block device may be used from any thread; the value only reads
// them and submits bios.
unsafe impl Send for BackingDev {}
// SAFETY: as above: every method takes `&self` and is safe to call concurrently.
unsafe impl Sync for BackingDev {}

impl BackingDev {
    /// Opens the block device at `path` (bytes without a NUL) as C zram does: the open's own
    /// error (`ENOENT`, `EBUSY` when another holder has it exclusively, ...), `ENOTBLK` for a
    /// file that is not a block device, `EINVAL` for a device of less than a page.
    pub(crate) fn open(path: &[u8]) -> Result<Self> {
        let mut name = KVec::with_capacity(path.len() + 1, GFP_KERNEL)?;
        name.extend_from_slice(path, GFP_KERNEL)?;
        name.push(0, GFP_KERNEL)?;
        let path = CStr::from_bytes_with_nul(&name).map_err(|_| EINVAL)?;
        let flags = (bindings::O_RDWR | bindings::O_LARGEFILE | bindings::O_EXCL) as c_int;
        // SAFETY: `path` is NUL-terminated and outlives the call.
        let file = from_err_ptr(unsafe { bindings::filp_open(path.as_char_ptr(), flags, 0) })?;
        // INVARIANT: a successful open, owned from here (closed on the error paths below).
        let mut file = OpenFile {
            file: NonNull::new(file).ok_or(EINVAL)?,
            block: false,
        };
        // SAFETY: an open file has a mapping, whose host is its inode; both live while it is
        // open.
        let mode = unsafe { (*(*(*file.file.as_ptr()).f_mapping).host).i_mode };
        if u32::from(mode) & bindings::S_IFMT != bindings::S_IFBLK {
            return Err(ENOTBLK);
        }
        // INVARIANT: a block device file (checked above).
        file.block = true;
        // SAFETY: the file is an open block device file (checked above).
        let bdev = unsafe { bindings::file_bdev(file.file.as_ptr()) };
        let bdev = NonNull::new(bdev).ok_or(EINVAL)?;
        // SAFETY: the device lives while the file is open; a plain read of its size, as
        // `bdev_nr_sectors()`.
        let sectors = unsafe { (*bdev.as_ptr()).bd_nr_sectors };
        let pages = usize::try_from(sectors / SECTORS_PER_PAGE).map_err(|_| EINVAL)?;
        // A device without a whole page (also C's guard against zram backing itself).
        if pages == 0 {
            return Err(EINVAL);
        }
        // INVARIANT: a block device file, its device and its size in pages, at least 1.
        Ok(Self { file, bdev, pages })
    }

    /// The device's size in page-sized blocks.
    pub(crate) fn pages(&self) -> usize {
        self.pages
    }

    /// Writes the device's path (`file_path()`) into `buf`; returns the part of `buf` that
    /// holds it (without the terminating NUL).
    pub(crate) fn path<'b>(&self, buf: &'b mut [u8]) -> Result<&'b [u8]> {
        let len = c_int::try_from(buf.len()).unwrap_or(c_int::MAX);
        // SAFETY: the file is open (type invariant); `buf` is writable for `len` bytes.
        let start = from_err_ptr(unsafe {
            bindings::file_path(self.file.file.as_ptr(), buf.as_mut_ptr().cast(), len)
        })?;
        let offset = (start as usize)
            .checked_sub(buf.as_ptr() as usize)
            .filter(|&offset| offset < buf.len())
            .ok_or(EINVAL)?;
        let path = &buf[offset..];
        let end = path.iter().position(|&b| b == 0).ok_or(EINVAL)?;
        Ok(&path[..end])
    }

    /// Reads `block` into `page` and waits for the device. Not from a driver's `submit_bio`
    /// (see [`read_page_waiting`]).
    pub(crate) fn read_page(&self, block: usize, page: &mut BouncePage) -> Result {
        self.submit_and_wait(block, page, bindings::req_op_REQ_OP_READ)
    }

    fn submit_and_wait(&self, block: usize, page: &BouncePage, opf: bindings::blk_opf_t) -> Result {
        let bio = self.page_bio(block, page.raw_page(), opf)?;
        // SAFETY: a complete bio, submitted once; returns when the device is done with it.
        let ret = unsafe { bindings::submit_bio_wait(bio.as_ptr()) };
        // SAFETY: drops our reference to the bio, which is no longer in flight.
        unsafe { bindings::bio_put(bio.as_ptr()) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(())
    }

    /// A bio of operation `opf` on the whole of `block`, from or into `page`, ready to submit:
    /// `EINVAL` for a block past the end. The bio comes from a mempool (`GFP_NOIO`: never
    /// fails, never starts I/O of its own).
    ///
    /// The caller owns the bio, and must keep `page` for it until the bio is done or put.
    pub(super) fn page_bio(
        &self,
        block: usize,
        page: *mut bindings::page,
        opf: bindings::blk_opf_t,
    ) -> Result<NonNull<bindings::bio>> {
        if block >= self.pages {
            return Err(EINVAL);
        }
        // No overflow: `block < pages`, and `pages * SECTORS_PER_PAGE` is the device's size.
        let sector = block as u64 * SECTORS_PER_PAGE;
        // SAFETY: the device is live (type invariant); `fs_bio_set` is the kernel's own bio
        // set, initialised at boot, and only its address is taken.
        let bio = unsafe {
            bindings::bio_alloc_bioset(
                self.bdev.as_ptr(),
                1,
                opf,
                ffi::GFP_NOIO,
                &raw mut bindings::fs_bio_set,
            )
        };
        let bio = NonNull::new(bio).ok_or(ENOMEM)?;
        // SAFETY: a fresh bio, ours until it is submitted or put.
        unsafe { (*bio.as_ptr()).bi_iter.bi_sector = sector };
        // SAFETY: the fresh bio has room for one page, which the caller keeps for it.
        let added = unsafe { bindings::bio_add_page(bio.as_ptr(), page, PAGE_SIZE as u32, 0) };
        if added as usize != PAGE_SIZE {
            // SAFETY: drops our reference to the bio, never submitted.
            unsafe { bindings::bio_put(bio.as_ptr()) };
            return Err(EIO);
        }
        Ok(bio)
    }
}

impl BackingDev {
    /// Reads `block` into the whole memory page of `dest` (a whole-page piece of a read being
    /// handled in a driver's `submit_bio`) with a bio chained to the read: the block layer
    /// starts it when `submit_bio` returns, and completes the read, with this bio's error if
    /// it fails, only once it is done (as C zram's `read_from_bdev_async()`). Never waits and
    /// never fails to allocate (the bio comes from a mempool).
    pub(crate) fn read_page_chained(&self, block: usize, dest: PageDest<'_>) -> Result {
        // A whole page of memory: a piece of a page is a whole page only from its start.
        if !dest.whole {
            return Err(EINVAL);
        }
        let parent = dest.parent.as_ptr();
        // SAFETY: the parent bio is live for the walk that lent `dest`.
        let opf = unsafe { (*parent).bi_opf };
        // `dest.page` stays pinned by the parent's owner until the parent completes, which the
        // chain below holds back until this bio is done.
        let bio = self.page_bio(block, dest.page.as_ptr(), opf)?;
        // SAFETY: both bios are live; the parent is still being submitted, so it cannot
        // complete before the chain holds it.
        unsafe { bindings::bio_chain(bio.as_ptr(), parent) };
        // SAFETY: a complete bio, submitted once; the block layer owns it from here.
        unsafe { bindings::submit_bio(bio.as_ptr()) };
        Ok(())
    }
}

impl BackingDev {
    /// Reads `block` into the whole memory page of `dest` (as [`Self::read_page_chained`]) and
    /// then, in a worker of the module's [`DeferredQueue`], calls `then` with the page's bytes; the read
    /// being handled completes once `then` has returned, failed if the device or `then` did
    /// (C zram 7.3's read of a page written back compressed, decompressed in a work item).
    /// Never waits; `ENOMEM` if the work item cannot be allocated.
    pub(crate) fn read_page_then<F>(&self, block: usize, dest: PageDest<'_>, then: F) -> Result
    where
        F: FnOnce(&mut [u8]) -> Result + Send + 'static,
    {
        if !dest.whole {
            return Err(EINVAL);
        }
        let parent = dest.parent;
        // SAFETY: the parent bio is live for the walk that lent `dest`.
        let opf = unsafe { (*parent.as_ptr()).bi_opf };
        let deferred = Deferred {
            work: Opaque::uninit(),
            parent,
            page: dest.page,
            status: 0,
            then: Some(then),
        };
        let deferred = mem::noio(|| KBox::new(deferred, GFP_KERNEL))?;
        // SAFETY: the work item is fresh and at its final address (boxed); initialised once.
        unsafe { ffi::zram_rs_init_work(deferred.work.get(), Some(deferred_work::<F>)) };
        // `dest.page` stays pinned by the parent's owner until the parent completes, which the
        // count taken below holds back until the work item has run.
        let bio = self.page_bio(block, dest.page.as_ptr(), opf)?;
        let deferred = KBox::into_raw(deferred);
        // SAFETY: a fresh bio, ours until submitted; the box is owned by the bio's end from
        // here, and then by the work item.
        unsafe { (*bio.as_ptr()).bi_private = deferred.cast() };
        // SAFETY: as above.
        unsafe { (*bio.as_ptr()).bi_end_io = Some(deferred_read_ended::<F>) };
        // SAFETY: the parent is live and still being submitted: one more end to wait for, which
        // the work item's `bio_endio()` gives.
        unsafe { ffi::zram_rs_bio_inc_remaining(parent.as_ptr()) };
        // SAFETY: a complete bio, submitted once; the block layer owns it from here.
        unsafe { bindings::submit_bio(bio.as_ptr()) };
        Ok(())
    }
}

/// The module's workqueue for [`BackingDev::read_page_then`]: high priority, with a rescuer
/// (swap-in may wait on it under memory pressure); dropping it runs what is queued and
/// destroys it. The module creates it before its first disk and drops it after its last.
///
/// # Invariants
///
/// The shim's workqueue exists while this value does; there is at most one.
pub(crate) struct DeferredQueue(());

/// Whether a [`DeferredQueue`] exists.
static DEFERRED_QUEUE: AtomicBool = AtomicBool::new(false);

impl DeferredQueue {
    /// Creates the workqueue: `ENOMEM`, or `EBUSY` if it exists already.
    pub(crate) fn new() -> Result<Self> {
        if DEFERRED_QUEUE.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        // SAFETY: no workqueue exists (checked above); creates the shim's one.
        let ret = unsafe { ffi::zram_rs_wq_create() };
        if ret != 0 {
            DEFERRED_QUEUE.store(false, Ordering::Release);
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: created above; the only one.
        Ok(Self(()))
    }
}

impl Drop for DeferredQueue {
    fn drop(&mut self) {
        // SAFETY: the workqueue exists (type invariant); destroyed once, here, after running
        // what is queued (every read's work item, the disks being gone).
        unsafe { ffi::zram_rs_wq_destroy() };
        DEFERRED_QUEUE.store(false, Ordering::Release);
    }
}

/// A read whose page, once read, is handed to `then` in a worker before `parent` completes.
///
/// # Invariants
///
/// `work` was initialised to run [`deferred_work`] with this `F`; `parent` holds one count
/// (`bio_inc_remaining()`) for this read, given back once by `bio_endio()`; `page` is a page of
/// `parent`'s, pinned until `parent` completes.
struct Deferred<F> {
    work: Opaque<bindings::work_struct>,
    parent: NonNull<bindings::bio>,
    page: NonNull<bindings::page>,
    /// The read's `bi_status`, stored by its end before the work item is queued.
    status: bindings::blk_status_t,
    then: Option<F>,
}

/// Ends the read of a [`BackingDev::read_page_then`]: keeps its status, puts the bio, and
/// queues the work item.
///
/// # Safety
///
/// `bio` was submitted by `read_page_then::<F>`, whose boxed [`Deferred`] is its private field,
/// owned by this call from here.
unsafe extern "C" fn deferred_read_ended<F>(bio: *mut bindings::bio) {
    // SAFETY: by the function's contract, the private field is the live, unshared box.
    let deferred = unsafe { (*bio).bi_private.cast::<Deferred<F>>() };
    // SAFETY: as above; the bio is live until the put below.
    unsafe { (*deferred).status = (*bio).bi_status };
    // SAFETY: the submitter's reference, the only one; the bio is not used after this.
    unsafe { bindings::bio_put(bio) };
    // SAFETY: the work item is initialised (type invariant); queueing hands the box over to
    // `deferred_work`, and orders the status store before it. The workqueue exists while a
    // disk can be read ([`DeferredQueue`]).
    unsafe { ffi::zram_rs_wq_queue((*deferred).work.get()) };
}

/// The work item of a [`BackingDev::read_page_then`]: runs `then` on the page if the read
/// succeeded, frees everything, and completes the parent with the outcome.
///
/// # Safety
///
/// `work` is the work item of a boxed `Deferred<F>` queued by [`deferred_read_ended`], owned
/// by this call from here.
unsafe extern "C" fn deferred_work<F>(work: *mut bindings::work_struct)
where
    F: FnOnce(&mut [u8]) -> Result + Send + 'static,
{
    let offset = core::mem::offset_of!(Deferred<F>, work);
    // SAFETY: `work` is the `work` field of a `Deferred<F>` (the function's contract).
    let deferred = unsafe { work.cast::<u8>().sub(offset) }.cast::<Deferred<F>>();
    // SAFETY: the box made by `read_page_then`, owned by this call.
    let mut deferred = unsafe { KBox::from_raw(deferred) };
    let parent = deferred.parent;
    let mut status = deferred.status;
    if let Some(then) = deferred.then.take() {
        if status == ffi::BLK_STS_OK {
            // SAFETY: the page is pinned until the parent completes, below, and only this
            // read's data goes there.
            let result = unsafe { super::bio::with_page_bytes(deferred.page, then) };
            if result.is_err() {
                status = ffi::BLK_STS_IOERR;
            }
        }
    }
    // Everything of this read goes before the parent completes.
    drop(deferred);
    if status != ffi::BLK_STS_OK {
        // SAFETY: the parent is live until its count from `read_page_then` is given back.
        unsafe { (*parent.as_ptr()).bi_status = status };
    }
    // SAFETY: gives back that count, once.
    unsafe { bindings::bio_endio(parent.as_ptr()) };
}

/// A read that a worker performs for the thread waiting in [`read_page_waiting`].
struct SyncRead<'a> {
    dev: &'a BackingDev,
    block: usize,
    page: &'a mut BouncePage,
    result: Result,
}

/// The worker's part of [`read_block_waiting`].
///
/// # Safety
///
/// `arg` points to a [`SyncRead`] that nobody else touches until this returns.
unsafe extern "C" fn sync_read(arg: *mut c_void) {
    // SAFETY: by the function's contract (`read_block_waiting` waits until this returns).
    let read = unsafe { &mut *arg.cast::<SyncRead<'_>>() };
    read.result = read.dev.read_page(read.block, read.page);
}

/// Reads bytes `offset..offset + out.len()` of `block` of `dev` into `out`, from any context
/// that may sleep, a driver's `submit_bio` included: a worker reads the whole block into a
/// bounce page while this thread waits for it.
pub(crate) fn read_page_waiting(
    dev: &BackingDev,
    block: usize,
    offset: usize,
    out: &mut [u8],
) -> Result {
    let end = offset
        .checked_add(out.len())
        .filter(|&end| end <= PAGE_SIZE)
        .ok_or(EINVAL)?;
    let mut page = BouncePage::new()?;
    read_block_waiting(dev, block, &mut page)?;
    out.copy_from_slice(&page.bytes()[offset..end]);
    Ok(())
}

/// Reads the whole of `block` of `dev` into `page`, from any context that may sleep, a
/// driver's `submit_bio` included, as [`read_page_waiting`].
pub(crate) fn read_block_waiting(dev: &BackingDev, block: usize, page: &mut BouncePage) -> Result {
    let mut read = SyncRead {
        dev,
        block,
        page,
        result: Err(EIO),
    };
    // SAFETY: `read` lives on this stack until the call returns, which is after the worker's
    // `sync_read` has returned; meanwhile only the worker touches it.
    unsafe { ffi::zram_rs_run_in_worker(sync_read, (&raw mut read).cast()) };
    read.result
}
