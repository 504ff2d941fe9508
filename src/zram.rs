// SPDX-License-Identifier: GPL-2.0
//! One zram device: its settings and life cycle (initialise through `disksize`, `reset`), the
//! read, write and discard paths over the [`PageStore`] and the compression streams, swap's
//! slot-free notifications, the memory limit, access times and `idle`, and the counters behind
//! `mm_stat`, `io_stat` and `debug_stat`; writeback in the child module `writeback.rs`, debugfs
//! `block_state` in `block_state.rs`. Safe
//! Rust only; the unsafe work is in the wrapper modules.
//!
//! # Locking
//!
//! Lock order: `init_lock` (a reader/writer semaphore, as C's: taken for writing by what
//! changes the device's settings or state — disksize, reset, algorithms, `backing_dev`,
//! `mem_limit` — and for reading by what only needs the device to stay as it is — the
//! statistics, `initstate`, `idle`, `compact`, `block_state`, writeback and recompression for
//! their whole run; reading `disksize` does not take it) → the backing device's `open_mutex`
//! (opened and closed by `backing_dev` and `reset` under `init_lock`) → the post-processing
//! turn (7.3, `writeback.rs`) → `choice` (the algorithms and parameters, a mutex; 6.12's
//! `algorithm_params` takes it alone, as C takes no lock) → `storage`
//! (a spinlock held only to clone or swap the `Arc` of the initialised state) → a compression
//! stream (a sleeping wait in `StreamPool`; under a slot lock only `try_get`, which never
//! waits) → a slot lock (`table.rs`) → zsmalloc's own locks.
//! The I/O path takes no device-wide lock: it gets the storage the disk published
//! ([`DiskRef::publish_io`]), may wait for a stream, and then only locks single slots. `reset`
//! takes the storage back under a [`Claim`] (no openers, so no I/O in flight). Attributes
//! reach the storage through the `storage` spinlock instead, which keeps its own reference.
//! This disk's own `open_mutex` (taken for claims) is never held together with `init_lock`.
//! A writeback or recompression holds `init_lock` for reading until it has let go of the
//! storage and the backing device, so `reset`, which takes it for writing, waits for it and is
//! then the last user of both; attribute writes that come during such a wait queue behind the
//! `reset` and act on the reset device, as in C.

use crate::algorithm::Named;
use crate::comp::{self, Algorithm, StreamGuard, StreamPool};
use crate::fill::fill;
use crate::kapi::bio::{Bio, PageDest, Piece};
use crate::kapi::bounce::BouncePage;
use crate::kapi::disk::{Claim, DiskOps, DiskRef};
use crate::kapi::rwsem::RwSemaphore;
use crate::kapi::zspool::{ZsHandle, ZsPool};
use crate::kapi::{cpu, mem, time};
use crate::same::same_filled;
use crate::slot::{Priority, SlotContent};
use crate::stats::{DebugStat, IoStat, MmStat};
use crate::table::{Layout, Mark, PageStore, SlotGuard, PAGE_SIZE};
use crate::writeback_args::Cutoff;
use compressors::{Choice, Recompressors};
use writeback::{Backing, WritebackState};

mod block_state;
mod compressors;
mod recompress;
mod writeback;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, Mutex, SpinLock};
use kernel::{new_mutex, new_spinlock};

const SECTOR_SHIFT: u32 = 9;

// A slot's value word holds a same-filled page's word: both are 64 bits.
const _: () = assert!(core::mem::size_of::<usize>() == core::mem::size_of::<u64>());

/// Settings changed only under `init_lock`.
struct Config {
    /// Bytes of the disk; 0 while not initialised.
    disksize: u64,
    /// The backing device (`backing_dev`), set before initialisation, closed by `reset`.
    backing: Option<Arc<Backing>>,
}

impl Config {
    const fn new() -> Self {
        Self {
            disksize: 0,
            backing: None,
        }
    }
}

/// Everything an initialised device has: the stored pages and the compression streams.
#[pin_data]
pub(crate) struct Storage {
    pages: PageStore,
    /// The primary algorithm's streams, and the algorithm.
    #[pin]
    streams: StreamPool,
    algorithm: Algorithm,
    /// The recompression algorithms and their streams.
    recompressors: Recompressors,
    /// Compressed sizes at or above this are stored uncompressed (zsmalloc's huge class).
    huge_class_size: usize,
    /// The backing device the device was initialised with.
    backing: Option<Arc<Backing>>,
    /// Pages are written back compressed (`compressed_writeback`, 7.3).
    compressed_writeback: bool,
}

impl Storage {
    /// The algorithm and streams of `priority`, if the device has it.
    #[inline(always)]
    fn comp(&self, priority: Priority) -> Option<(Algorithm, &StreamPool)> {
        if priority == Priority::PRIMARY {
            Some((self.algorithm, &self.streams))
        } else {
            self.recompressors.get(priority)
        }
    }

    /// Accounts for `old`, taken out of its slot, going away, and gives its backing block
    /// back. After the slot's unlock: the block is reused only once no slot names it.
    fn removed(&self, stats: &Stats, old: SlotContent) {
        if let (SlotContent::WrittenBack(block), Some(backing)) = (old, &self.backing) {
            backing.release(block);
        }
        stats.removed(old);
    }
}

/// Counters, all reset by `reset`.
///
/// The counters of what is stored (`pages_stored`, `compr_data_size`, `same_pages`,
/// `zero_pages`, `huge_pages`) count a new content under the lock of its slot, before the
/// unlock that lets anyone else see (and remove) it, and take away an old content only after
/// taking it out of its slot, under the lock or after it. A page's addition therefore comes
/// before its removal in every counter's order of changes, and no reader sees a counter below
/// zero.
#[derive(Default)]
struct Stats {
    pages_stored: AtomicU64,
    compr_data_size: AtomicU64,
    same_pages: AtomicU64,
    /// The same-filled pages whose word is 0 (a subset of `same_pages`).
    zero_pages: AtomicU64,
    huge_pages: AtomicU64,
    huge_pages_since: AtomicU64,
    max_used_pages: AtomicU64,
    failed_reads: AtomicU64,
    failed_writes: AtomicU64,
    notify_free: AtomicU64,
    miss_free: AtomicU64,
    writestall: AtomicU64,
    /// Pages read from the backing device.
    bd_reads: AtomicU64,
    /// Pages written to the backing device.
    bd_writes: AtomicU64,
}

impl Stats {
    fn reset(&self) {
        for counter in [
            &self.pages_stored,
            &self.compr_data_size,
            &self.same_pages,
            &self.zero_pages,
            &self.huge_pages,
            &self.huge_pages_since,
            &self.max_used_pages,
            &self.failed_reads,
            &self.failed_writes,
            &self.notify_free,
            &self.miss_free,
            &self.writestall,
            &self.bd_reads,
            &self.bd_writes,
        ] {
            counter.store(0, Relaxed);
        }
    }

    /// Accounts for a slot's content going away (its backing block, if any, is given back by
    /// [`Storage::removed`]).
    fn removed(&self, old: SlotContent) {
        match old {
            SlotContent::Empty => return,
            SlotContent::WrittenBack(_) => {}
            SlotContent::Same(word) => {
                self.same_pages.fetch_sub(1, Relaxed);
                if word == 0 {
                    self.zero_pages.fetch_sub(1, Relaxed);
                }
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

    /// Accounts for a same-filled page being stored.
    fn stored_same(&self, word: usize) {
        self.same_pages.fetch_add(1, Relaxed);
        if word == 0 {
            self.zero_pages.fetch_add(1, Relaxed);
        }
        self.pages_stored.fetch_add(1, Relaxed);
    }

    /// Accounts for a page written back (which still counts as stored, as in C).
    fn stored_written_back(&self) {
        self.pages_stored.fetch_add(1, Relaxed);
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
    init_lock: RwSemaphore<Config>,
    /// The compression algorithms and their parameters, by priority, that the next
    /// initialisation uses (and the current one uses). Changed under `init_lock` held for
    /// writing, but by 6.12's `algorithm_params`, which C runs under no lock (inside
    /// `init_lock` in the lock order).
    #[pin]
    choice: Mutex<Choice>,
    /// The initialised state, while initialised.
    #[pin]
    storage: SpinLock<Option<Arc<Storage>>>,
    /// `mem_limit` in pages, 0 for none. Changed under `init_lock`, read by writers.
    limit_pages: AtomicU64,
    /// Whether writes look for same-filled pages (`same_detection`, a zram_rs extension).
    same_detection: AtomicBool,
    /// The writeback settings and the post-processing in progress.
    #[pin]
    writeback: WritebackState,
    stats: Stats,
}

impl Zram {
    /// A new, uninitialised device number `id`.
    pub(crate) fn new(id: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            id,
            init_lock <- RwSemaphore::new(Config::new()),
            choice <- new_mutex!(Choice::new(), "Zram::choice"),
            storage <- new_spinlock!(None, "Zram::storage"),
            limit_pages: AtomicU64::new(0),
            same_detection: AtomicBool::new(true),
            writeback <- WritebackState::new(),
            stats: Stats::default(),
        })
    }

    fn storage(&self) -> Option<Arc<Storage>> {
        self.storage.lock().clone()
    }

    /// The disk size in bytes, 0 when not initialised. Without `init_lock`, as C reads it: a
    /// reader does not wait for a `reset` or an initialisation in progress.
    pub(crate) fn disksize(&self) -> u64 {
        // Under the spinlock, without a reference of its own: a `reset` stays the last user
        // of the storage. No overflow: the table has `disksize / PAGE_SIZE` slots.
        self.storage.lock().as_ref().map_or(0, |s| {
            (s.pages.pages() as u64).saturating_mul(PAGE_SIZE as u64)
        })
    }

    /// The pool's huge class size while initialised (looked at without a reference of its
    /// own, as [`Self::disksize`]).
    fn huge_class_size(&self) -> Option<usize> {
        self.storage.lock().as_ref().map(|s| s.huge_class_size)
    }

    /// `initstate`: whether the device is initialised, under `init_lock` held for reading as
    /// C (a read while a `reset` waits answers after it).
    pub(crate) fn initialised(&self) -> bool {
        let _config = self.init_lock.read();
        self.disksize() != 0
    }

    /// Initialises the device with `requested` bytes (rounded up to whole pages): allocates the
    /// slot table and the pool and sets the disk's capacity.
    pub(crate) fn initialise(&self, disk: DiskRef<'_, Zram>, requested: u64) -> Result {
        if requested == 0 {
            return Err(EINVAL);
        }
        let mut config = self.init_lock.write();
        if config.disksize != 0 {
            pr_info!("Cannot change disksize for initialized device\n");
            return Err(EBUSY);
        }
        // PAGE_ALIGN, wrapping like C: a size within a page of 2^64 becomes 0 and fails below.
        let disksize = requested.wrapping_add(PAGE_SIZE as u64 - 1) & !(PAGE_SIZE as u64 - 1);
        // C zram 7.x refuses the wrapped size itself (EINVAL); 6.12 fails to allocate (ENOMEM).
        if cfg!(zram_abi_7_3) && disksize == 0 {
            return Err(EINVAL);
        }
        let pages = usize::try_from(disksize / PAGE_SIZE as u64).map_err(|_| ENOMEM)?;
        let pool = ZsPool::new(format_args!("zram{}", self.id))?;
        let huge_class_size = pool.huge_class_size();
        let pages = PageStore::new(pages, pool)?;
        let choice = self.choice.lock().clone();
        let algorithm = choice.primary();
        let count = cpu::num_online_cpus() as usize;
        // Each algorithm's streams, in priority order (as C's `comps`).
        let streams = StreamPool::new(algorithm, choice.params(Priority::PRIMARY), count)
            .map_err(|error| (algorithm, error))
            .and_then(|streams| Ok((streams, Recompressors::new(&choice, count)?)));
        let (streams, recompressors) = match streams {
            Ok(both) => both,
            Err((failed, error)) => {
                pr_err!("Cannot initialise {} compressing backend\n", failed.name());
                // As C's `zram_destroy_comps`: a backend that fails to start takes the
                // selections with it; the next initialisation starts from the default
                // algorithm, no recompression algorithm and no parameters. The backing device
                // stays.
                *self.choice.lock() = Choice::new();
                return Err(error);
            }
        };
        let backing = config.backing.clone();
        let storage = Arc::pin_init(
            pin_init!(Storage {
                pages,
                streams <- streams,
                algorithm,
                recompressors,
                huge_class_size,
                backing,
                compressed_writeback: self.writeback.compressed(),
            }),
            GFP_KERNEL,
        )?;
        // Published exactly while `disksize` is set, both under `init_lock`.
        disk.publish_io(storage.clone()).map_err(|_| EBUSY)?;
        *self.storage.lock() = Some(storage);
        config.disksize = disksize;
        disk.set_capacity_sectors(disksize >> SECTOR_SHIFT);
        Ok(())
    }

    /// `reset`: frees everything stored and returns the device to its uninitialised state;
    /// `EBUSY` while the disk is open.
    pub(crate) fn reset(&self, disk: DiskRef<'_, Zram>) -> Result {
        let claim = disk.claim()?;
        self.reset_device(&claim);
        Ok(())
    }

    /// Writes back the disk's dirty page cache, frees everything stored, returns the settings
    /// to their defaults and zeroes the counters, under a claim of the disk.
    pub(crate) fn reset_device(&self, claim: &Claim<'_, Zram>) {
        claim.disk().sync();
        // Waits for a writeback or recompression in progress, which holds `init_lock` for
        // reading until it has let go of the storage and the backing device.
        let mut config = self.init_lock.write();
        self.limit_pages.store(0, Relaxed);
        self.same_detection.store(true, Relaxed);
        claim.disk().set_capacity_sectors(0);
        claim.disk().clear_io_stats();
        let io = claim.take_io();
        let storage = self.storage.lock().take();
        // The last references: free every object, the pool, the table and the streams (may
        // sleep, so outside the spinlock).
        drop(io);
        drop(storage);
        *config = Config::new();
        *self.choice.lock() = Choice::new();
        self.stats.reset();
    }

    /// Sets `mem_limit` in bytes (rounded up to pages; 0 for none).
    pub(crate) fn set_mem_limit(&self, bytes: u64) {
        let _config = self.init_lock.write();
        let aligned = bytes.wrapping_add(PAGE_SIZE as u64 - 1) & !(PAGE_SIZE as u64 - 1);
        self.limit_pages.store(aligned / PAGE_SIZE as u64, Relaxed);
    }

    /// Resets `mem_used_max` to the memory used now (nothing when not initialised). Under
    /// `init_lock`, as C: a `reset` cannot come between reading the pool and storing its size;
    /// on 7.3 after a running post-processing, as C 7.3.
    pub(crate) fn reset_mem_used_max(&self) {
        let _config = self.init_lock.read();
        let _turn = self.writeback.turn_7_3();
        if let Some(storage) = self.storage() {
            self.stats
                .max_used_pages
                .store(storage.pages.pool().total_pages(), Relaxed);
        }
    }

    /// `idle`: marks every slot holding an object that `cutoff` finds idle, and unmarks the
    /// others (a slot being recompressed after its recompression); `EINVAL` when not
    /// initialised. Under `init_lock`, as C: a `reset` waits for it.
    /// On 7.3 a post-processing in progress is waited for first, and none starts during the
    /// walk (C 7.3 runs them under its device lock, which `idle` takes too).
    pub(crate) fn mark_idle(&self, cutoff: Cutoff) -> Result {
        let _config = self.init_lock.read();
        let _turn = self.writeback.turn_7_3();
        let storage = self.storage().ok_or(EINVAL)?;
        for index in 0..storage.pages.pages() {
            // A slot being recompressed is judged once its recompression is over, as in C,
            // whose recompression holds the slot's lock throughout (on 7.3 the whole
            // recompression was waited for above). The window is one page's compressions,
            // and may hold a wait for a stream: a few turns offered to the scheduler, then
            // sleeps, so that a waiting `idle` never keeps the recompression from running.
            let mut tries = 0u32;
            while let Some(mut slot) = storage.pages.lock(index) {
                if !slot.has_mark(Mark::Recompress) {
                    slot.mark_idle(cutoff);
                    break;
                }
                drop(slot);
                if tries < 16 {
                    tries += 1;
                    cpu::cond_resched();
                } else {
                    cpu::sleep_ms(1);
                }
            }
        }
        Ok(())
    }

    /// Runs pool compaction; `EINVAL` when not initialised. Under `init_lock`, as C: a `reset`
    /// waits for it, and then frees the pool itself; on 7.3 after a running post-processing,
    /// as C 7.3.
    pub(crate) fn compact(&self) -> Result {
        let _config = self.init_lock.read();
        let _turn = self.writeback.turn_7_3();
        let storage = self.storage().ok_or(EINVAL)?;
        storage.pages.pool().compact();
        Ok(())
    }

    /// Reads page `index` into `out` (`PAGE_SIZE` bytes), an access at `now` (seconds). With
    /// `dest`, `out` is a whole page of a bio being read, to which a read of the backing device
    /// is chained; without it, that read is waited for.
    #[inline(always)]
    fn read_page(
        &self,
        storage: &Storage,
        index: usize,
        out: &mut [u8],
        dest: Option<Chain<'_>>,
        now: u32,
    ) -> Result {
        let (slot, content) = match lock_to_read(storage, index, now)? {
            Found::Locked(slot, content) => (slot, content),
            Found::WrittenBack(block) => {
                return self.read_written_back(storage, index, block, 0, out, dest)
            }
        };
        if let Some(plain) = Plain::of(content) {
            return read_plain(&slot, plain, index, out);
        }
        // The algorithm that compressed the object: the primary one, or a recompression one.
        let priority = slot.priority();
        let (_, streams) = storage.comp(priority).ok_or(EIO)?;
        if let Some(stateless) = streams.stateless() {
            return read_compressed(&slot, index, out, Decompression::Stateless(stateless));
        }
        // A free stream is taken without waiting, under the slot lock.
        if let Some(mut stream) = streams.try_get() {
            let result = read_compressed(&slot, index, out, Decompression::Stream(&mut stream));
            // Unlock before the stream goes back: returning it may wake a waiting borrower,
            // which takes a mutex.
            drop(slot);
            drop(stream);
            return result;
        }
        drop(slot);
        self.read_page_after_wait(storage, index, out, dest, now, priority)
    }

    /// [`Self::read_page`] when every stream of the algorithm of `priority` is busy: waits for
    /// one, which may sleep and so happens without the slot lock, then reads the page as it is
    /// by then (again with another algorithm's stream if it was recompressed or rewritten
    /// meanwhile).
    #[inline(never)]
    fn read_page_after_wait(
        &self,
        storage: &Storage,
        index: usize,
        out: &mut [u8],
        dest: Option<Chain<'_>>,
        now: u32,
        mut priority: Priority,
    ) -> Result {
        loop {
            // Declared after the stream, the slot guard is dropped (unlocked) before it.
            let mut stream = storage.comp(priority).ok_or(EIO)?.1.get();
            match lock_to_read(storage, index, now)? {
                Found::Locked(slot, content) => {
                    let now_priority = slot.priority();
                    if Plain::of(content).is_none() && now_priority != priority {
                        priority = now_priority;
                        continue;
                    }
                    return read_locked(&slot, content, index, out, &mut stream);
                }
                Found::WrittenBack(block) => {
                    // The stream goes back before the device is read.
                    drop(stream);
                    return self.read_written_back(storage, index, block, 0, out, dest);
                }
            }
        }
    }

    /// Compresses `data` (`PAGE_SIZE` bytes) and stores it as page `index`, an access at `now`
    /// (seconds); a page that does not compress below zsmalloc's huge class is stored as it is.
    #[inline(always)]
    fn write_page(&self, storage: &Storage, index: usize, data: &[u8], now: u32) -> Result {
        if index >= storage.pages.pages() {
            return Err(EIO);
        }
        if self.same_detection.load(Relaxed) {
            if let Some(word) = same_filled(data) {
                // Nothing to compress or allocate: the slot keeps the word.
                let word = word as usize;
                let mut slot = storage.pages.lock(index).ok_or(EIO)?;
                self.stats.stored_same(word);
                let old = slot.store_same(word);
                slot.accessed(now);
                drop(slot);
                storage.removed(&self.stats, old);
                return Ok(());
            }
        }
        let (handle, huge) = self.compress_into_object(storage, data)?;
        let size = handle.size();
        let mut slot = storage.pages.lock(index).ok_or(EIO)?;
        // Fails only for a handle of another pool, which `compress_into_object` never makes;
        // the handle is then freed on return.
        let old = slot
            .store_object(handle, huge, Priority::PRIMARY)
            .map_err(|_| EIO)?;
        self.stats.stored_object(size, huge);
        slot.accessed(now);
        drop(slot);
        storage.removed(&self.stats, old);
        Ok(())
    }

    /// Compresses `data` and copies the result (or `data` itself, when it does not compress
    /// below zsmalloc's huge class) into a new pool object; returns the object and whether it
    /// is huge. Allocates as C zram does: first without direct reclaim, holding the stream;
    /// failing that (counted as a write stall), the stream goes back before the allocation
    /// that may reclaim and sleep, so that readers and writers of this algorithm are not held
    /// up, and the page is compressed again with whichever stream comes next
    /// ([`Self::compress_again`], out of the common path).
    #[inline(always)]
    fn compress_into_object<'a>(
        &self,
        storage: &'a Storage,
        data: &[u8],
    ) -> Result<(ZsHandle<'a>, bool)> {
        let pool = storage.pages.pool();
        let mut stream = storage.streams.get();
        let (object, huge) = compress_page(&mut stream, data, storage.huge_class_size)?;
        match pool.alloc(object.len(), mem::GFP_POOL_OBJECT_FAST) {
            Ok(handle) => self.fill_object(pool, handle, object, huge),
            Err(_) => {
                let len = object.len();
                drop(stream);
                self.stats.writestall.fetch_add(1, Relaxed);
                let reserved = alloc_with_reclaim(pool, len)?;
                self.compress_again(storage, data, reserved)
            }
        }
    }

    /// [`Self::compress_into_object`] after the allocation that may reclaim: `reserved` was
    /// allocated for the size the page compressed to before.
    #[inline(never)]
    fn compress_again<'a>(
        &self,
        storage: &'a Storage,
        data: &[u8],
        reserved: ZsHandle<'a>,
    ) -> Result<(ZsHandle<'a>, bool)> {
        let pool = storage.pages.pool();
        let mut reserved = Some(reserved);
        let mut whole = false;
        let mut stream = storage.streams.get();
        loop {
            // A page-sized reservation is for a huge page: no need to compress again (as C).
            let (object, huge) =
                if whole || reserved.as_ref().is_some_and(|r| r.size() == PAGE_SIZE) {
                    (data, true)
                } else {
                    compress_page(&mut stream, data, storage.huge_class_size)?
                };
            let handle = match reserved.take() {
                Some(handle) if handle.size() == object.len() => handle,
                Some(other) => {
                    // The page compressed to another size than before the slow allocation (a
                    // buffer changed under its write): free that object and store the page
                    // whole, a size that cannot change.
                    drop(other);
                    whole = true;
                    continue;
                }
                None => match pool.alloc(object.len(), mem::GFP_POOL_OBJECT_FAST) {
                    Ok(handle) => handle,
                    Err(_) => {
                        let len = object.len();
                        drop(stream);
                        self.stats.writestall.fetch_add(1, Relaxed);
                        reserved = Some(alloc_with_reclaim(pool, len)?);
                        stream = storage.streams.get();
                        continue;
                    }
                },
            };
            return self.fill_object(pool, handle, object, huge);
        }
    }

    /// Copies `object` into `handle` (allocated for its size) unless the pool is now above
    /// the memory limit (`ENOMEM`, the handle freed); records the pool's high-water mark.
    #[inline(always)]
    fn fill_object<'a>(
        &self,
        pool: &'a ZsPool,
        handle: ZsHandle<'a>,
        object: &[u8],
        huge: bool,
    ) -> Result<(ZsHandle<'a>, bool)> {
        let used = pool.total_pages();
        // Read first: an atomic read-modify-write on every write would bounce the line.
        if used > self.stats.max_used_pages.load(Relaxed) {
            self.stats.max_used_pages.fetch_max(used, Relaxed);
        }
        let limit = self.limit_pages.load(Relaxed);
        if limit != 0 && used > limit {
            // The handle is freed on return.
            return Err(ENOMEM);
        }
        handle.write(object);
        Ok((handle, huge))
    }

    #[inline(always)]
    fn read_piece(
        &self,
        storage: ArcBorrow<'_, Storage>,
        piece: Piece,
        out: &mut [u8],
        dest: PageDest<'_>,
        now: u32,
    ) -> Result {
        if piece.len == PAGE_SIZE {
            let chain = Chain { dest, storage };
            self.read_page(&storage, piece.index, out, Some(chain), now)
        } else {
            self.read_part_of_page(&storage, piece.index, piece.offset, out, now)
        }
    }

    /// Reads the part of page `index` from byte `offset` that `out` covers (less than a page).
    /// Takes scalars rather than a [`Piece`], which would be built in memory on every page read.
    #[inline(never)]
    fn read_part_of_page(
        &self,
        storage: &Storage,
        index: usize,
        offset: usize,
        out: &mut [u8],
        now: u32,
    ) -> Result {
        // Part of an empty or same-filled page expands straight into the requested range: no
        // bounce page, no copy.
        {
            let mut slot = storage.pages.lock(index).ok_or(EIO)?;
            slot.accessed(now);
            match slot.content() {
                SlotContent::Empty => {
                    fill(out, offset, 0);
                    return Ok(());
                }
                SlotContent::Same(word) => {
                    fill(out, offset, word as u64);
                    return Ok(());
                }
                SlotContent::WrittenBack(block) => {
                    drop(slot);
                    return self.read_written_back(storage, index, block, offset, out, None);
                }
                SlotContent::Stored { .. } => {}
            }
        }
        let mut bounce = BouncePage::new()?;
        let page = bounce.bytes_mut();
        self.read_page(storage, index, page, None, now)?;
        let part = page.get(offset..offset + out.len()).ok_or(EIO)?;
        out.copy_from_slice(part);
        Ok(())
    }

    #[inline(always)]
    fn write_piece(&self, storage: &Storage, piece: Piece, data: &[u8], now: u32) -> Result {
        if piece.len == PAGE_SIZE {
            self.write_page(storage, piece.index, data, now)
        } else {
            self.write_part_of_page(storage, piece.index, piece.offset, data, now)
        }
    }

    /// Writes `data` into page `index` from byte `offset` (less than a page): reads the page,
    /// patches it, writes it back.
    #[inline(never)]
    fn write_part_of_page(
        &self,
        storage: &Storage,
        index: usize,
        offset: usize,
        data: &[u8],
        now: u32,
    ) -> Result {
        let mut bounce = BouncePage::new()?;
        let page = bounce.bytes_mut();
        self.read_page(storage, index, page, None, now)?;
        page.get_mut(offset..offset + data.len())
            .ok_or(EIO)?
            .copy_from_slice(data);
        self.write_page(storage, index, page, now)
    }

    fn free_page(&self, storage: &Storage, index: usize) {
        if let Some(mut slot) = storage.pages.lock(index) {
            let old = slot.clear();
            drop(slot);
            storage.removed(&self.stats, old);
        }
    }

    /// The `mm_stat` figures, read under `init_lock` (as C) so that a `reset` is not half seen.
    /// Products saturate rather than overflow: no read can panic.
    pub(crate) fn mm_stat(&self) -> MmStat {
        let page = PAGE_SIZE as u64;
        let _config = self.init_lock.read();
        let storage = self.storage();
        let pool = storage.as_ref().map(|storage| storage.pages.pool());
        let stats = &self.stats;
        MmStat {
            orig_data_size: stats.pages_stored.load(Relaxed).saturating_mul(page),
            compr_data_size: stats.compr_data_size.load(Relaxed),
            mem_used_total: pool.map_or(0, |pool| pool.total_pages().saturating_mul(page)),
            mem_limit: self.limit_pages.load(Relaxed).wrapping_mul(page),
            mem_used_max: stats.max_used_pages.load(Relaxed).saturating_mul(page),
            same_pages: stats.same_pages.load(Relaxed),
            pages_compacted: pool.map_or(0, |pool| pool.pages_compacted()),
            huge_pages: stats.huge_pages.load(Relaxed),
            huge_pages_since: stats.huge_pages_since.load(Relaxed),
        }
    }

    /// The `same_stat` figures: zero pages and other same-filled pages currently stored.
    pub(crate) fn same_stat(&self) -> (u64, u64) {
        let same = self.stats.same_pages.load(Relaxed);
        let zero = self.stats.zero_pages.load(Relaxed);
        (zero, same.saturating_sub(zero))
    }

    /// Whether writes look for same-filled pages.
    pub(crate) fn same_detection(&self) -> bool {
        self.same_detection.load(Relaxed)
    }

    /// Turns same-filled page detection on or off for the writes that follow.
    pub(crate) fn set_same_detection(&self, enabled: bool) {
        self.same_detection.store(enabled, Relaxed);
    }

    /// The `debug_stat` figures (under `init_lock`, as C).
    pub(crate) fn debug_stat(&self) -> DebugStat {
        let _config = self.init_lock.read();
        DebugStat {
            // C zram 7.x no longer counts stalls (its writes allocate once, with reclaim);
            // zram_rs keeps its fast and slow paths and shows the count only where C does.
            writestall: (!cfg!(zram_abi_7_3)).then(|| self.stats.writestall.load(Relaxed)),
            miss_free: self.stats.miss_free.load(Relaxed),
        }
    }

    /// The `io_stat` figures (under `init_lock`, as C).
    pub(crate) fn io_stat(&self) -> IoStat {
        let _config = self.init_lock.read();
        IoStat {
            failed_reads: self.stats.failed_reads.load(Relaxed),
            failed_writes: self.stats.failed_writes.load(Relaxed),
            notify_free: self.stats.notify_free.load(Relaxed),
        }
    }
}

impl DiskOps for Zram {
    type Io = Storage;

    // The I/O methods are inlined into the disk's `submit_bio` callback: one frame per bio.
    #[inline(always)]
    fn read(&self, storage: ArcBorrow<'_, Storage>, bio: &mut Bio<'_>) -> Result {
        let now = access_time();
        bio.for_each_piece_out(|piece, out, dest| self.read_piece(storage, piece, out, dest, now))
            .inspect_err(|_| {
                self.stats.failed_reads.fetch_add(1, Relaxed);
            })
    }

    #[inline(always)]
    fn write(&self, storage: &Storage, bio: &Bio<'_>) -> Result {
        let now = access_time();
        bio.for_each_piece_in(|piece, data| self.write_piece(storage, piece, data, now))
            .inspect_err(|_| {
                self.stats.failed_writes.fetch_add(1, Relaxed);
            })
    }

    fn discard(&self, storage: &Storage, start: u64, len: u64) {
        for index in Layout::discard_pages(start, len) {
            self.free_page(storage, index as usize);
            self.stats.notify_free.fetch_add(1, Relaxed);
        }
    }

    fn swap_slot_free_notify(&self, storage: Option<&Storage>, index: usize) {
        self.stats.notify_free.fetch_add(1, Relaxed);
        let Some(storage) = storage else {
            return;
        };
        match storage.pages.try_lock(index) {
            Some(mut slot) => {
                let old = slot.clear();
                drop(slot);
                storage.removed(&self.stats, old);
            }
            None => {
                self.stats.miss_free.fetch_add(1, Relaxed);
            }
        };
    }
}

/// The write path's pool allocation after the one without reclaim failed: with direct reclaim
/// but no I/O; quiet on 7.3, as C 7.3's one allocation (`__GFP_NOWARN`), while on 6.12 a failure
/// warns, as C 6.12's second try.
fn alloc_with_reclaim(pool: &ZsPool, len: usize) -> Result<ZsHandle<'_>> {
    let gfp = if cfg!(zram_abi_7_3) {
        mem::GFP_POOL_OBJECT_QUIET
    } else {
        mem::GFP_POOL_OBJECT
    };
    pool.alloc(len, gfp)
}

/// The access time of the pages of one request: whole seconds of boot time, as C 7.3 keeps
/// them (`(u32)ktime_get_boottime_seconds()`; 6.12 keeps nanoseconds), read once per bio; 0
/// where C zram keeps none (without `CONFIG_ZRAM_TRACK_ENTRY_ACTIME`).
#[inline(always)]
fn access_time() -> u32 {
    if !cfg!(zram_rs_track_entry_actime) {
        return 0;
    }
    // Truncation as C's: wraps after 136 years of uptime.
    time::boottime_seconds() as u32
}

/// What a slot holds that reads without decompression.
#[derive(Clone, Copy)]
enum Plain {
    /// Never written or freed: zeroes.
    Empty,
    /// A same-filled page's word.
    Same(usize),
    /// A page stored whole.
    Huge,
}

impl Plain {
    /// `content` if it reads without decompression; `None` for a compressed object.
    #[inline(always)]
    fn of(content: SlotContent) -> Option<Self> {
        match content {
            SlotContent::Empty => Some(Self::Empty),
            SlotContent::Same(word) => Some(Self::Same(word)),
            SlotContent::Stored { huge: true, .. } => Some(Self::Huge),
            // Read without the slot lock, from the backing device, by the callers.
            SlotContent::Stored { huge: false, .. } | SlotContent::WrittenBack(_) => None,
        }
    }
}

/// How a compressed page is decompressed: with a borrowed stream, or without one where the
/// algorithm allows ([`comp::Stateless`] exists only then).
enum Decompression<'s, 'g> {
    Stream(&'s mut StreamGuard<'g>),
    Stateless(comp::Stateless),
}

/// Expands or copies page `index`, whose slot is locked and holds `plain`, into `out`
/// (`PAGE_SIZE` bytes).
#[inline(always)]
fn read_plain(slot: &SlotGuard<'_>, plain: Plain, index: usize, out: &mut [u8]) -> Result {
    match plain {
        Plain::Empty => fill(out, 0, 0),
        Plain::Same(word) => fill(out, 0, word as u64),
        // A whole-page object is never copied to be read (no scratch).
        Plain::Huge => {
            let copied = slot.read_object(&mut [], |object, _| {
                let whole = object.len() == out.len();
                if whole {
                    mem::copy_page_bytes(out, object);
                }
                whole
            });
            if copied != Some(true) {
                pr_err!("Decompression failed! page={}\n", index);
                return Err(EIO);
            }
        }
    }
    Ok(())
}

/// Where a whole page being read goes if it comes from the backing device: its page of the
/// bio, and the storage, kept by work that completes the bio later.
pub(super) struct Chain<'a> {
    dest: PageDest<'a>,
    storage: ArcBorrow<'a, Storage>,
}

/// A slot found for a read: locked, with its content, or naming the backing device's block
/// that holds the page (unlocked: the device is read without the lock).
enum Found<'s> {
    Locked(SlotGuard<'s>, SlotContent),
    WrittenBack(usize),
}

/// Locks slot `index` for a read at `now` (an access: the page is no longer idle).
#[inline(always)]
fn lock_to_read(storage: &Storage, index: usize, now: u32) -> Result<Found<'_>> {
    let mut slot = storage.pages.lock(index).ok_or(EIO)?;
    slot.accessed(now);
    Ok(match slot.content() {
        SlotContent::WrittenBack(block) => Found::WrittenBack(block),
        content => Found::Locked(slot, content),
    })
}

/// Locks slot `index` with a stream of the algorithm that compressed its object (the primary
/// algorithm's for any other content; on 7.3 a written-back slot keeps its object's): the
/// stream is taken first, as taking one may sleep and the slot lock may not, and taken again if
/// the slot's algorithm changed meanwhile. Runs `f` under the lock, and returns the stream, for
/// use after the unlock, with its result; `None` if the slot cannot be locked.
fn lock_with_stream<'s, R>(
    storage: &'s Storage,
    index: usize,
    f: impl FnOnce(&mut SlotGuard<'_>, &mut StreamGuard<'s>) -> R,
) -> Option<(StreamGuard<'s>, R)> {
    let priority = storage.pages.lock(index)?.priority();
    lock_with_stream_of(storage, index, priority, f)
}

/// [`lock_with_stream`] for a caller that has just seen the slot's algorithm: a stream of
/// `priority`'s first.
fn lock_with_stream_of<'s, R>(
    storage: &'s Storage,
    index: usize,
    mut priority: Priority,
    f: impl FnOnce(&mut SlotGuard<'_>, &mut StreamGuard<'s>) -> R,
) -> Option<(StreamGuard<'s>, R)> {
    loop {
        let mut stream = storage.comp(priority)?.1.get();
        let mut slot = storage.pages.lock(index)?;
        if slot.priority() == priority {
            let result = f(&mut slot, &mut stream);
            drop(slot);
            return Some((stream, result));
        }
        priority = slot.priority();
        drop(slot);
    }
}

/// Reads page `index`, whose locked slot holds `content` in memory (not written back), into
/// `out` (`PAGE_SIZE` bytes), decompressing with `stream` where needed.
fn read_locked(
    slot: &SlotGuard<'_>,
    content: SlotContent,
    index: usize,
    out: &mut [u8],
    stream: &mut StreamGuard<'_>,
) -> Result {
    match Plain::of(content) {
        Some(plain) => read_plain(slot, plain, index, out),
        None => read_compressed(slot, index, out, Decompression::Stream(stream)),
    }
}

/// Decompresses page `index`, whose locked slot holds a compressed object, into `out`
/// (`PAGE_SIZE` bytes).
#[inline(always)]
fn read_compressed(
    slot: &SlotGuard<'_>,
    index: usize,
    out: &mut [u8],
    decompression: Decompression<'_, '_>,
) -> Result {
    let result = match decompression {
        Decompression::Stream(stream) => {
            // The stream's buffer is where zsmalloc may copy an object that spans pages.
            let (scratch, decompressor) = stream.scratch_and_decompressor();
            slot.read_object(scratch, |object, _| decompressor.decompress(object, out))
        }
        // Only where zsmalloc never needs a scratch buffer (`comp::Stateless`).
        Decompression::Stateless(stateless) => {
            slot.read_object(&mut [], |object, _| stateless.decompress(object, out))
        }
    }
    .unwrap_or(Err(EIO));
    if result.is_err() {
        pr_err!("Decompression failed! page={}\n", index);
    }
    result
}

/// Compresses `data` (a page) with `stream`; returns what to store and whether it is huge:
/// the compressed bytes, or `data` itself when they reach zsmalloc's huge class.
#[inline(always)]
fn compress_page<'s>(
    stream: &'s mut StreamGuard<'_>,
    data: &'s [u8],
    huge_class_size: usize,
) -> Result<(&'s [u8], bool)> {
    let compressed = stream.compress(data).inspect_err(|e| {
        pr_err!("Compression failed! err={}\n", e.to_errno());
    })?;
    Ok(if compressed.len() >= huge_class_size {
        (data, true)
    } else {
        (compressed, false)
    })
}
