// SPDX-License-Identifier: GPL-2.0
//! One zram device: its settings and life cycle (initialise through `disksize`, `reset`), the
//! read, write and discard paths over the [`PageStore`] and the compression streams, swap's
//! slot-free notifications, the memory limit, and the counters behind `mm_stat`, `io_stat` and
//! `debug_stat`. Safe Rust only; the unsafe work is in the wrapper modules.
//!
//! # Locking
//!
//! Lock order: `init_lock` (a mutex; disksize, reset, algorithm and limit changes) → `storage`
//! (a spinlock held only to clone or swap the `Arc` of the initialised state) → a compression
//! stream (a sleeping wait in `StreamPool`; under a slot lock only `try_get`, which never
//! waits) → a slot lock (`table.rs`) → zsmalloc's own locks.
//! The I/O path takes no device-wide lock: it gets the storage the disk published
//! ([`DiskRef::publish_io`]), may wait for a stream, and then only locks single slots. `reset`
//! takes the storage back under a [`Claim`] (no openers, so no I/O in flight). Attributes
//! reach the storage through the `storage` spinlock instead, which keeps its own reference.
//! The disk's `open_mutex` (taken for claims) is never held together with `init_lock`.

use crate::algorithm::{self, Algorithm, AlgorithmParams, NO_LEVEL};
use crate::bio::{Bio, Piece};
use crate::bounce::BouncePage;
use crate::compress::{self, StreamGuard, StreamPool};
use crate::disk::{Claim, DiskOps, DiskRef};
use crate::ffi;
use crate::fill::fill;
use crate::same::same_filled;
use crate::slot::{self, SlotContent, PAGE_SIZE};
use crate::stats::{DebugStat, IoStat, MmStat};
use crate::table::{PageStore, SlotGuard};
use crate::zspool::ZsPool;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::{new_mutex, new_spinlock};

const SECTOR_SHIFT: u32 = 9;

// A slot's value word holds a same-filled page's word: both are 64 bits.
const _: () = assert!(core::mem::size_of::<usize>() == core::mem::size_of::<u64>());

/// Settings changed only under `init_lock`.
struct Config {
    /// Bytes of the disk; 0 while not initialised.
    disksize: u64,
    /// The compression algorithm the next initialisation uses (and the current one uses).
    algorithm: Algorithm,
    /// Its level, or [`NO_LEVEL`] for the algorithm's default.
    level: i32,
}

impl Config {
    const fn new() -> Self {
        Self {
            disksize: 0,
            algorithm: Algorithm::DEFAULT,
            level: NO_LEVEL,
        }
    }
}

/// Everything an initialised device has: the stored pages and the compression streams.
#[pin_data]
pub(crate) struct Storage {
    pages: PageStore,
    #[pin]
    streams: StreamPool,
    algorithm: Algorithm,
    /// Compressed sizes at or above this are stored uncompressed (zsmalloc's huge class).
    huge_class_size: usize,
}

/// Counters, all reset by `reset`.
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
        ] {
            counter.store(0, Relaxed);
        }
    }

    /// Accounts for a slot's content going away.
    fn removed(&self, old: SlotContent) {
        match old {
            SlotContent::Empty => return,
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
    /// The initialised state, while initialised.
    #[pin]
    storage: SpinLock<Option<Arc<Storage>>>,
    /// `mem_limit` in pages, 0 for none. Changed under `init_lock`, read by writers.
    limit_pages: AtomicU64,
    /// Whether writes look for same-filled pages (`same_detection`, a zram_rs extension).
    same_detection: AtomicBool,
    stats: Stats,
}

impl Zram {
    /// A new, uninitialised device number `id`.
    pub(crate) fn new(id: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            id,
            init_lock <- new_mutex!(Config::new(), "Zram::init_lock"),
            storage <- new_spinlock!(None, "Zram::storage"),
            limit_pages: AtomicU64::new(0),
            same_detection: AtomicBool::new(true),
            stats: Stats::default(),
        })
    }

    fn storage(&self) -> Option<Arc<Storage>> {
        self.storage.lock().clone()
    }

    /// The disk size in bytes, 0 when not initialised.
    pub(crate) fn disksize(&self) -> u64 {
        self.init_lock.lock().disksize
    }

    /// Initialises the device with `requested` bytes (rounded up to whole pages): allocates the
    /// slot table and the pool and sets the disk's capacity.
    pub(crate) fn initialise(&self, disk: DiskRef<'_, Zram>, requested: u64) -> Result {
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
        let pool = ZsPool::new(&name)?;
        let huge_class_size = pool.huge_class_size();
        let pages = PageStore::new(pages, pool)?;
        let algorithm = config.algorithm;
        let streams = StreamPool::new(algorithm, config.level, ffi::num_online_cpus() as usize)
            .inspect_err(|_| {
                pr_err!(
                    "Cannot initialise {} compressing backend\n",
                    algorithm.name()
                );
            })?;
        let storage = Arc::pin_init(
            pin_init!(Storage {
                pages,
                streams <- streams,
                algorithm,
                huge_class_size,
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
        let mut config = self.init_lock.lock();
        self.limit_pages.store(0, Relaxed);
        self.same_detection.store(true, Relaxed);
        claim.disk().set_capacity_sectors(0);
        let io = claim.take_io();
        let storage = self.storage.lock().take();
        // The last references: free every object, the pool, the table and the streams (may
        // sleep, so outside the spinlock).
        drop(io);
        drop(storage);
        *config = Config::new();
        self.stats.reset();
    }

    /// The `comp_algorithm` line.
    pub(crate) fn write_algorithms(&self, out: &mut impl core::fmt::Write) -> core::fmt::Result {
        let selected = self.init_lock.lock().algorithm;
        algorithm::write_list(out, selected, compress::available)
    }

    /// Selects the compression algorithm for the next initialisation.
    pub(crate) fn set_algorithm(&self, input: &[u8]) -> Result {
        let chosen =
            algorithm::parse_name(input, compress::available).map_err(|error| match error {
                algorithm::NameError::TooLong => E2BIG,
                algorithm::NameError::Unknown => {
                    let name = crate::parse::c_str(input);
                    let name = name.strip_suffix(b"\n").unwrap_or(name);
                    pr_info!(
                        "unknown compression algorithm '{}'; available: {}\n",
                        kernel::str::BStr::from_bytes(name),
                        AvailableList
                    );
                    EINVAL
                }
            })?;
        let mut config = self.init_lock.lock();
        if config.disksize != 0 {
            pr_info!("Can't change algorithm for initialized device\n");
            return Err(EBUSY);
        }
        config.algorithm = chosen;
        Ok(())
    }

    /// Applies an `algorithm_params` write. Only the primary compressor (priority 0) exists.
    pub(crate) fn set_algorithm_params(&self, params: AlgorithmParams<'_>) -> Result {
        let mut config = self.init_lock.lock();
        let priority = match params.algo {
            Some(name) if name != config.algorithm.name().as_bytes() => -1,
            Some(_) => 0,
            None => params.priority,
        };
        if priority != 0 {
            return Err(EINVAL);
        }
        if params.dict.is_some() {
            return Err(ffi::eopnotsupp());
        }
        config.level = params.level;
        Ok(())
    }

    /// Sets `mem_limit` in bytes (rounded up to pages; 0 for none).
    pub(crate) fn set_mem_limit(&self, bytes: u64) {
        let _config = self.init_lock.lock();
        let aligned = bytes.wrapping_add(PAGE_SIZE as u64 - 1) & !(PAGE_SIZE as u64 - 1);
        self.limit_pages.store(aligned / PAGE_SIZE as u64, Relaxed);
    }

    /// Resets `mem_used_max` to the memory used now (nothing when not initialised).
    pub(crate) fn reset_mem_used_max(&self) {
        if let Some(storage) = self.storage() {
            self.stats
                .max_used_pages
                .store(storage.pages.pool().total_pages(), Relaxed);
        }
    }

    /// `idle`: marks every slot holding an object as idle; `EINVAL` when not initialised.
    pub(crate) fn mark_all_idle(&self) -> Result {
        let storage = self.storage().ok_or(EINVAL)?;
        for index in 0..storage.pages.pages() {
            if let Some(mut slot) = storage.pages.lock(index) {
                slot.mark_idle();
            }
        }
        Ok(())
    }

    /// Runs pool compaction; `EINVAL` when not initialised.
    pub(crate) fn compact(&self) -> Result {
        let storage = self.storage().ok_or(EINVAL)?;
        storage.pages.pool().compact();
        Ok(())
    }

    /// Reads page `index` into `out` (`PAGE_SIZE` bytes).
    #[inline(always)]
    fn read_page(&self, storage: &Storage, index: usize, out: &mut [u8]) -> Result {
        let mut slot = storage.pages.lock(index).ok_or(EIO)?;
        // An access: the page is no longer idle.
        slot.clear_idle();
        let content = slot.content();
        if !needs_stream(content, storage.algorithm) {
            return read_slot(&slot, content, index, storage.algorithm, out, None);
        }
        // A free stream is taken without waiting, under the slot lock.
        if let Some(mut stream) = storage.streams.try_get() {
            let result = read_slot(
                &slot,
                content,
                index,
                storage.algorithm,
                out,
                Some(&mut stream),
            );
            // Unlock before the stream goes back: returning it may wake a waiting borrower,
            // which takes a mutex.
            drop(slot);
            drop(stream);
            return result;
        }
        drop(slot);
        self.read_page_after_wait(storage, index, out)
    }

    /// [`Self::read_page`] when every stream is busy: waits for one, which may sleep and so
    /// happens without the slot lock, then reads the page as it is by then.
    #[inline(never)]
    fn read_page_after_wait(&self, storage: &Storage, index: usize, out: &mut [u8]) -> Result {
        // Declared after the stream, the slot guard is dropped (unlocked) before it.
        let mut stream = storage.streams.get();
        let slot = storage.pages.lock(index).ok_or(EIO)?;
        let content = slot.content();
        read_slot(
            &slot,
            content,
            index,
            storage.algorithm,
            out,
            Some(&mut stream),
        )
    }

    /// Allocates `len` bytes from the pool the way C zram does: first without direct reclaim,
    /// then (counted as a write stall) with it.
    fn alloc_object(&self, storage: &Storage, len: usize) -> Result<crate::zspool::ZsHandle> {
        let pool = storage.pages.pool();
        pool.alloc(len, ffi::GFP_POOL_OBJECT_FAST).or_else(|_| {
            self.stats.writestall.fetch_add(1, Relaxed);
            pool.alloc(len, ffi::GFP_POOL_OBJECT)
        })
    }

    /// Compresses `data` (`PAGE_SIZE` bytes) and stores it as page `index`; a page that does
    /// not compress below zsmalloc's huge class is stored as it is.
    #[inline(always)]
    fn write_page(&self, storage: &Storage, index: usize, data: &[u8]) -> Result {
        if index >= storage.pages.pages() {
            return Err(EIO);
        }
        if self.same_detection.load(Relaxed) {
            if let Some(word) = same_filled(data) {
                // Nothing to compress or allocate: the slot keeps the word.
                let word = word as usize;
                let mut slot = storage.pages.lock(index).ok_or(EIO)?;
                let old = slot.store_same(word);
                drop(slot);
                self.stats.removed(old);
                self.stats.stored_same(word);
                return Ok(());
            }
        }
        let mut stream = storage.streams.get();
        let compressed = stream.compress(data).inspect_err(|e| {
            pr_err!("Compression failed! err={}\n", e.to_errno());
        })?;
        let (object, huge) = if compressed.len() >= storage.huge_class_size {
            (data, true)
        } else {
            (compressed, false)
        };
        let handle = self.alloc_object(storage, object.len())?;
        let pool = storage.pages.pool();
        let used = pool.total_pages();
        // Read first: an atomic read-modify-write on every write would bounce the line.
        if used > self.stats.max_used_pages.load(Relaxed) {
            self.stats.max_used_pages.fetch_max(used, Relaxed);
        }
        let limit = self.limit_pages.load(Relaxed);
        if limit != 0 && used > limit {
            pool.free(handle);
            return Err(ENOMEM);
        }
        pool.write(&handle, object);
        drop(stream);
        let size = handle.size();
        let mut slot = storage.pages.lock(index).ok_or(EIO)?;
        let old = slot.store_object(handle, huge);
        drop(slot);
        self.stats.removed(old);
        self.stats.stored_object(size, huge);
        Ok(())
    }

    #[inline(always)]
    fn read_piece(&self, storage: &Storage, piece: Piece, out: &mut [u8]) -> Result {
        if piece.len == PAGE_SIZE {
            self.read_page(storage, piece.index, out)
        } else {
            self.read_part_of_page(storage, piece.index, piece.offset, out)
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
    ) -> Result {
        // Part of an empty or same-filled page expands straight into the requested range: no
        // bounce page, no copy.
        {
            let mut slot = storage.pages.lock(index).ok_or(EIO)?;
            slot.clear_idle();
            match slot.content() {
                SlotContent::Empty => {
                    fill(out, offset, 0);
                    return Ok(());
                }
                SlotContent::Same(word) => {
                    fill(out, offset, word as u64);
                    return Ok(());
                }
                SlotContent::Stored { .. } => {}
            }
        }
        let mut bounce = BouncePage::new()?;
        let page = bounce.bytes_mut();
        self.read_page(storage, index, page)?;
        let part = page.get(offset..offset + out.len()).ok_or(EIO)?;
        out.copy_from_slice(part);
        Ok(())
    }

    #[inline(always)]
    fn write_piece(&self, storage: &Storage, piece: Piece, data: &[u8]) -> Result {
        if piece.len == PAGE_SIZE {
            self.write_page(storage, piece.index, data)
        } else {
            self.write_part_of_page(storage, piece.index, piece.offset, data)
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
    ) -> Result {
        let mut bounce = BouncePage::new()?;
        let page = bounce.bytes_mut();
        self.read_page(storage, index, page)?;
        page.get_mut(offset..offset + data.len())
            .ok_or(EIO)?
            .copy_from_slice(data);
        self.write_page(storage, index, page)
    }

    fn free_page(&self, storage: &Storage, index: usize) {
        if let Some(mut slot) = storage.pages.lock(index) {
            let old = slot.clear();
            drop(slot);
            self.stats.removed(old);
        }
    }

    /// The `mm_stat` figures.
    pub(crate) fn mm_stat(&self) -> MmStat {
        let page = PAGE_SIZE as u64;
        let storage = self.storage();
        let pool = storage.as_ref().map(|storage| storage.pages.pool());
        let stats = &self.stats;
        MmStat {
            orig_data_size: stats.pages_stored.load(Relaxed) * page,
            compr_data_size: stats.compr_data_size.load(Relaxed),
            mem_used_total: pool.map_or(0, |pool| pool.total_pages() * page),
            mem_limit: self.limit_pages.load(Relaxed).wrapping_mul(page),
            mem_used_max: stats.max_used_pages.load(Relaxed) * page,
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

    /// The `debug_stat` figures.
    pub(crate) fn debug_stat(&self) -> DebugStat {
        DebugStat {
            writestall: self.stats.writestall.load(Relaxed),
            miss_free: self.stats.miss_free.load(Relaxed),
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
    type Io = Storage;

    // The I/O methods are inlined into the disk's `submit_bio` callback: one frame per bio.
    #[inline(always)]
    fn read(&self, storage: &Storage, bio: &mut Bio<'_>) -> Result {
        bio.for_each_piece_out(|piece, out| self.read_piece(storage, piece, out))
            .inspect_err(|_| {
                self.stats.failed_reads.fetch_add(1, Relaxed);
            })
    }

    #[inline(always)]
    fn write(&self, storage: &Storage, bio: &Bio<'_>) -> Result {
        bio.for_each_piece_in(|piece, data| self.write_piece(storage, piece, data))
            .inspect_err(|_| {
                self.stats.failed_writes.fetch_add(1, Relaxed);
            })
    }

    fn discard(&self, storage: &Storage, start: u64, len: u64) {
        for index in slot::discard_pages(start, len) {
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
                self.stats.removed(old);
            }
            None => {
                self.stats.miss_free.fetch_add(1, Relaxed);
            }
        };
    }
}

/// Whether reading a page with `content` needs a compression stream of `algorithm`.
#[inline(always)]
fn needs_stream(content: SlotContent, algorithm: Algorithm) -> bool {
    matches!(content, SlotContent::Stored { huge: false, .. })
        && !compress::decompresses_without_stream(algorithm)
}

/// Expands, copies or decompresses page `index`, whose slot is locked and holds `content`, into
/// `out` (`PAGE_SIZE` bytes). `stream` is needed when [`needs_stream`] says so; without it,
/// such a page fails with `EIO`.
#[inline(always)]
fn read_slot(
    slot: &SlotGuard<'_>,
    content: SlotContent,
    index: usize,
    algorithm: Algorithm,
    out: &mut [u8],
    stream: Option<&mut StreamGuard<'_>>,
) -> Result {
    let result = match content {
        SlotContent::Empty => {
            fill(out, 0, 0);
            return Ok(());
        }
        SlotContent::Same(word) => {
            fill(out, 0, word as u64);
            return Ok(());
        }
        SlotContent::Stored { huge: true, .. } => slot.read_object(|object, _| {
            if object.len() != out.len() {
                return Err(EIO);
            }
            ffi::copy_page_bytes(out, object);
            Ok(())
        }),
        SlotContent::Stored { huge: false, .. } => match stream {
            Some(stream) => slot.read_object(|object, _| stream.decompress(object, out)),
            None if compress::decompresses_without_stream(algorithm) => {
                slot.read_object(|object, _| compress::decompress_stateless(algorithm, object, out))
            }
            None => None,
        },
    }
    .unwrap_or(Err(EIO));
    if result.is_err() {
        pr_err!("Decompression failed! page={}\n", index);
    }
    result
}

/// Formats the names of the available algorithms, for messages.
struct AvailableList;

impl core::fmt::Display for AvailableList {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut first = true;
        for algorithm in Algorithm::ALL
            .into_iter()
            .filter(|&a| compress::available(a))
        {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(algorithm.name())?;
            first = false;
        }
        Ok(())
    }
}
