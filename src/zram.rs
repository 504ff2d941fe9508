// SPDX-License-Identifier: GPL-2.0
//! One zram device: its life cycle (initialise through `disksize`, `reset`), the read, write
//! and discard paths over the [`PageStore`], swap's slot-free notifications, and the counters
//! behind `mm_stat` and `io_stat`. Safe Rust only; the unsafe work is in the wrapper modules.
//!
//! # Locking
//!
//! Lock order: `init_lock` (a mutex; disksize, reset) → `store` (a spinlock held only to clone or
//! swap the `Arc` of the page store) → a slot lock (`table.rs`) → zsmalloc's own locks.
//! The I/O path takes no device-wide lock for long: it clones the store's `Arc` and then only
//! locks single slots. `reset` refuses while the disk is open, so no I/O can be in flight when
//! the store is dropped; the disk's `open_mutex` (taken via [`DiskRef::with_open_mutex`]) is
//! never held together with `init_lock`.

use crate::bio::{Bio, Op, Piece};
use crate::bounce::BouncePage;
use crate::disk::{DiskOps, DiskRef};
use crate::ffi;
use crate::slot::{self, SlotContent, PAGE_SIZE};
use crate::stats::{IoStat, MmStat};
use crate::table::PageStore;
use crate::zspool::ZsPool;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::{new_mutex, new_spinlock};

const SECTOR_SHIFT: u32 = 9;

/// Settings changed only under `init_lock`.
struct Config {
    /// Bytes of the disk; 0 while not initialised.
    disksize: u64,
}

/// Counters, all reset by `reset`.
#[derive(Default)]
struct Stats {
    pages_stored: AtomicU64,
    compr_data_size: AtomicU64,
    same_pages: AtomicU64,
    huge_pages: AtomicU64,
    huge_pages_since: AtomicU64,
    max_used_pages: AtomicU64,
    failed_reads: AtomicU64,
    failed_writes: AtomicU64,
    notify_free: AtomicU64,
    miss_free: AtomicU64,
}

impl Stats {
    fn reset(&self) {
        for counter in [
            &self.pages_stored,
            &self.compr_data_size,
            &self.same_pages,
            &self.huge_pages,
            &self.huge_pages_since,
            &self.max_used_pages,
            &self.failed_reads,
            &self.failed_writes,
            &self.notify_free,
            &self.miss_free,
        ] {
            counter.store(0, Relaxed);
        }
    }

    /// Accounts for a slot's content going away.
    fn removed(&self, old: SlotContent) {
        match old {
            SlotContent::Empty => return,
            SlotContent::Same(_) => {
                self.same_pages.fetch_sub(1, Relaxed);
            }
            SlotContent::Stored { size, huge, .. } => {
                self.compr_data_size.fetch_sub(size as u64, Relaxed);
                if huge {
                    self.huge_pages.fetch_sub(1, Relaxed);
                }
            }
        }
        self.pages_stored.fetch_sub(1, Relaxed);
    }

    /// Accounts for an object of `size` bytes being stored.
    fn stored_object(&self, size: usize, huge: bool) {
        self.compr_data_size.fetch_add(size as u64, Relaxed);
        if huge {
            self.huge_pages.fetch_add(1, Relaxed);
            self.huge_pages_since.fetch_add(1, Relaxed);
        }
        self.pages_stored.fetch_add(1, Relaxed);
    }
}

/// One zram device (`/dev/zramN`).
#[pin_data]
pub(crate) struct Zram {
    id: u32,
    #[pin]
    init_lock: Mutex<Config>,
    /// The page store while initialised.
    #[pin]
    store: SpinLock<Option<Arc<PageStore>>>,
    /// Set while `reset` or `hot_remove` works on the device: opens fail with `EBUSY`.
    /// Changed only under the disk's `open_mutex`.
    claim: AtomicBool,
    stats: Stats,
}

impl Zram {
    /// A new, uninitialised device number `id`.
    pub(crate) fn new(id: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            id,
            init_lock <- new_mutex!(Config { disksize: 0 }, "Zram::init_lock"),
            store <- new_spinlock!(None, "Zram::store"),
            claim: AtomicBool::new(false),
            stats: Stats::default(),
        })
    }

    fn store(&self) -> Option<Arc<PageStore>> {
        self.store.lock().clone()
    }

    /// The disk size in bytes, 0 when not initialised.
    pub(crate) fn disksize(&self) -> u64 {
        self.init_lock.lock().disksize
    }

    /// Initialises the device with `requested` bytes (rounded up to whole pages): allocates the
    /// slot table and the pool and sets the disk's capacity.
    pub(crate) fn initialise(&self, disk: DiskRef<'_>, requested: u64) -> Result {
        if requested == 0 {
            return Err(EINVAL);
        }
        let mut config = self.init_lock.lock();
        if config.disksize != 0 {
            pr_info!("Cannot change disksize for initialized device\n");
            return Err(EBUSY);
        }
        // PAGE_ALIGN, wrapping like C: a size within a page of 2^64 becomes 0 and fails below.
        let disksize = requested.wrapping_add(PAGE_SIZE as u64 - 1) & !(PAGE_SIZE as u64 - 1);
        let pages = usize::try_from(disksize / PAGE_SIZE as u64).map_err(|_| ENOMEM)?;
        let name = CString::try_from_fmt(format_args!("zram{}", self.id))?;
        let store = PageStore::new(pages, ZsPool::new(&name)?)?;
        let store = Arc::new(store, GFP_KERNEL)?;
        *self.store.lock() = Some(store);
        config.disksize = disksize;
        disk.set_capacity_sectors(disksize >> SECTOR_SHIFT);
        Ok(())
    }

    /// Claims the device for reset or removal: fails with `EBUSY` while it is open or already
    /// claimed. On success, opens fail until [`Zram::unclaim`].
    pub(crate) fn claim(&self, disk: DiskRef<'_>) -> Result {
        disk.with_open_mutex(|openers| {
            if openers > 0 || self.claim.load(Relaxed) {
                Err(EBUSY)
            } else {
                self.claim.store(true, Relaxed);
                Ok(())
            }
        })
    }

    /// Ends a claim.
    pub(crate) fn unclaim(&self, disk: DiskRef<'_>) {
        disk.with_open_mutex(|_| self.claim.store(false, Relaxed));
    }

    /// `reset`: frees everything stored and returns the device to its uninitialised state.
    pub(crate) fn reset(&self, disk: DiskRef<'_>) -> Result {
        self.claim(disk)?;
        disk.sync();
        self.reset_device(disk);
        self.unclaim(disk);
        Ok(())
    }

    /// Frees the store and zeroes the counters; the caller has claimed the device.
    pub(crate) fn reset_device(&self, disk: DiskRef<'_>) {
        let mut config = self.init_lock.lock();
        disk.set_capacity_sectors(0);
        let store = self.store.lock().take();
        // The last reference: frees every object, the pool and the table (may sleep, so
        // outside the spinlock).
        drop(store);
        config.disksize = 0;
        self.stats.reset();
    }

    fn update_used_max(&self, store: &PageStore) {
        self.stats
            .max_used_pages
            .fetch_max(store.pool().total_pages(), Relaxed);
    }

    /// Reads page `index` into `out` (`PAGE_SIZE` bytes).
    fn read_page(&self, store: &PageStore, index: usize, out: &mut [u8]) -> Result {
        let slot = store.lock(index).ok_or(EIO)?;
        match slot.content() {
            SlotContent::Empty => out.fill(0),
            SlotContent::Same(word) => {
                for chunk in out.chunks_exact_mut(core::mem::size_of::<usize>()) {
                    chunk.copy_from_slice(&word.to_ne_bytes());
                }
            }
            SlotContent::Stored { .. } => {
                slot.read_object(|object, _huge| {
                    if object.len() == out.len() {
                        out.copy_from_slice(object);
                        Ok(())
                    } else {
                        Err(EIO)
                    }
                })
                .unwrap_or(Err(EIO))?;
            }
        }
        Ok(())
    }

    /// Stores `data` (`PAGE_SIZE` bytes) as page `index`.
    fn write_page(&self, store: &PageStore, index: usize, data: &[u8]) -> Result {
        if index >= store.pages() {
            return Err(EIO);
        }
        let handle = store.pool().alloc(PAGE_SIZE, ffi::GFP_POOL_OBJECT)?;
        store.pool().write(&handle, data);
        self.update_used_max(store);
        let size = handle.size();
        let mut slot = store.lock(index).ok_or(EIO)?;
        let old = slot.store_object(handle, true);
        drop(slot);
        self.stats.removed(old);
        self.stats.stored_object(size, true);
        Ok(())
    }

    fn read_piece(&self, store: &PageStore, piece: Piece, out: &mut [u8]) -> Result {
        if piece.len == PAGE_SIZE {
            return self.read_page(store, piece.index, out);
        }
        let mut bounce = BouncePage::new()?;
        let page = bounce.bytes_mut();
        self.read_page(store, piece.index, page)?;
        out.copy_from_slice(&page[piece.offset..piece.offset + piece.len]);
        Ok(())
    }

    fn write_piece(&self, store: &PageStore, piece: Piece, data: &[u8]) -> Result {
        if piece.len == PAGE_SIZE {
            return self.write_page(store, piece.index, data);
        }
        // A partial page: read, patch, write back.
        let mut bounce = BouncePage::new()?;
        let page = bounce.bytes_mut();
        self.read_page(store, piece.index, page)?;
        page[piece.offset..piece.offset + piece.len].copy_from_slice(data);
        self.write_page(store, piece.index, page)
    }

    fn free_page(&self, store: &PageStore, index: usize) {
        if let Some(mut slot) = store.lock(index) {
            let old = slot.clear();
            drop(slot);
            self.stats.removed(old);
        }
    }

    fn discard(&self, store: &PageStore, start: u64, len: u64) {
        for index in slot::discard_pages(start, len) {
            self.free_page(store, index as usize);
            self.stats.notify_free.fetch_add(1, Relaxed);
        }
    }

    /// The `mm_stat` figures.
    pub(crate) fn mm_stat(&self) -> MmStat {
        let page = PAGE_SIZE as u64;
        let store = self.store();
        let pool = store.as_ref().map(|store| store.pool());
        let stats = &self.stats;
        MmStat {
            orig_data_size: stats.pages_stored.load(Relaxed) * page,
            compr_data_size: stats.compr_data_size.load(Relaxed),
            mem_used_total: pool.map_or(0, |pool| pool.total_pages() * page),
            mem_limit: 0,
            mem_used_max: stats.max_used_pages.load(Relaxed) * page,
            same_pages: stats.same_pages.load(Relaxed),
            pages_compacted: pool.map_or(0, |pool| pool.pages_compacted()),
            huge_pages: stats.huge_pages.load(Relaxed),
            huge_pages_since: stats.huge_pages_since.load(Relaxed),
        }
    }

    /// The `io_stat` figures.
    pub(crate) fn io_stat(&self) -> IoStat {
        IoStat {
            failed_reads: self.stats.failed_reads.load(Relaxed),
            failed_writes: self.stats.failed_writes.load(Relaxed),
            notify_free: self.stats.notify_free.load(Relaxed),
        }
    }
}

impl DiskOps for Zram {
    fn open(&self) -> Result {
        if self.claim.load(Relaxed) {
            return Err(EBUSY);
        }
        Ok(())
    }

    fn submit_bio(&self, bio: &mut Bio<'_>) -> Result {
        let Some(store) = self.store() else {
            return Err(EIO);
        };
        match bio.op() {
            Op::Read => bio
                .for_each_piece_out(|piece, out| self.read_piece(&store, piece, out))
                .inspect_err(|_| {
                    self.stats.failed_reads.fetch_add(1, Relaxed);
                }),
            Op::Write => bio
                .for_each_piece_in(|piece, data| self.write_piece(&store, piece, data))
                .inspect_err(|_| {
                    self.stats.failed_writes.fetch_add(1, Relaxed);
                }),
            Op::Discard | Op::WriteZeroes => {
                self.discard(&store, bio.start_byte(), bio.len());
                Ok(())
            }
            Op::Other => Err(ffi::eopnotsupp()),
        }
    }

    fn swap_slot_free_notify(&self, index: usize) {
        self.stats.notify_free.fetch_add(1, Relaxed);
        let Some(store) = self.store() else { return };
        match store.try_lock(index) {
            Some(mut slot) => {
                let old = slot.clear();
                drop(slot);
                self.stats.removed(old);
            }
            None => {
                self.stats.miss_free.fetch_add(1, Relaxed);
            }
        };
    }
}
