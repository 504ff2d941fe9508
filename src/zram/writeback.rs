// SPDX-License-Identifier: GPL-2.0
//! Writeback to a backing device, as C zram of the kernel built for: the device and the map of
//! its blocks (`backing_dev`), the budget (`writeback_limit`, `writeback_limit_enable`), the
//! `writeback` operation, the reads of written-back pages, and `bd_stat`.
//!
//! A writeback holds `init_lock` for reading from start to end (so that `mm_stat` and the other
//! readers answer while it runs, and `reset` waits for it), and is the device's post-processing
//! in progress ([`PostProcessing`]); it lets go of the storage and the backing device before
//! `init_lock`, so a waiting `reset` is their last user. A page being written
//! back keeps its slot's content, marked ([`SlotGuard::set_mark`]); the slot changes to
//! the written-back block only if the mark survived the write, that is if nobody changed,
//! freed or read the page meanwhile (C's `ZRAM_UNDER_WB` / `ZRAM_PP_SLOT`). A failed write
//! leaves the page in memory.

use super::{
    lock_with_stream, read_locked, Chain, Config, SlotGuard, Storage, StreamGuard, Zram, PAGE_SIZE,
};
use crate::blocks::{self, BlockMap};
use crate::kapi::bdev::{self, BackingDev};
use crate::kapi::bounce::BouncePage;
use crate::kapi::page_writes::{self, PageWrites};
use crate::kapi::rwsem::ReadGuard;
use crate::kapi::{cpu, mem};
use crate::slot::SlotContent;
use crate::table::Mark;
use crate::writeback_args::{self, Filter, Refused, Request6_12, Scan};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use kernel::alloc::flags::{GFP_KERNEL, GFP_NOWAIT};
use kernel::alloc::{KVec, VVec};
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::lock::mutex::MutexBackend;
use kernel::sync::lock::Guard;
use kernel::sync::{Arc, Mutex};

/// Longest path `backing_dev` takes, with its NUL (C's `PATH_MAX`).
const PATH_MAX: usize = 4096;
/// `writeback_batch_size` of a new device (C's).
const DEFAULT_BATCH_SIZE: u32 = 32;
/// 4 KiB units per page: `writeback_limit` and `bd_stat` count in 4 KiB (C's `FOUR_K()`).
const FOUR_K_PER_PAGE: u64 = (PAGE_SIZE / 4096) as u64;

/// The words of a block map.
pub(super) struct Words(VVec<AtomicUsize>);

impl AsRef<[AtomicUsize]> for Words {
    fn as_ref(&self) -> &[AtomicUsize] {
        &self.0
    }
}

/// A backing device and the map of its blocks that hold written-back pages.
pub(super) struct Backing {
    dev: BackingDev,
    blocks: BlockMap<Words>,
}

impl Backing {
    fn new(dev: BackingDev) -> Result<Self> {
        let count = dev.pages();
        let words = Words(mem::zeroed_words(blocks::words_for(count))?);
        // 6.12 never hands out block 0; 7.3 does.
        let blocks = BlockMap::new(words, count, !cfg!(zram_abi_7_3)).map_err(|_| EINVAL)?;
        Ok(Self { dev, blocks })
    }

    /// Gives `block` back once no slot names it.
    pub(super) fn release(&self, block: usize) {
        // A block not in use would be a bug; C warns once. Nothing to undo here.
        let _ = self.blocks.release(block);
    }
}

/// The writeback settings, which survive `reset` (as C's), and the post-processing in
/// progress.
#[pin_data]
pub(super) struct WritebackState {
    /// `writeback_limit_enable`.
    limit_enabled: AtomicBool,
    /// `writeback_limit`, in 4 KiB units.
    limit: AtomicU64,
    /// `writeback_batch_size`: page writes in flight at once, at least 1.
    batch_size: AtomicU32,
    /// `compressed_writeback` (7.3): pages go to the backing device as their compressed
    /// objects. Changed only under `init_lock` while not initialised; each initialisation
    /// takes it for its storage.
    compressed: AtomicBool,
    /// 6.12: a post-processing, writeback or recompression, runs (C's `pp_in_progress`).
    busy: AtomicBool,
    /// 7.3: held by the post-processing in progress and by `idle`, `compact` and
    /// `mem_used_max` (C 7.3 runs them under its device lock); taken with `init_lock` held for
    /// reading.
    #[pin]
    turn: Mutex<()>,
}

/// The post-processing, writeback or recompression, in progress on a device: at most one.
/// Taken and held with `init_lock` held for reading (which a `reset` waits for).
pub(super) struct PostProcessing<'a> {
    /// 6.12: C's `pp_in_progress` flag, cleared on drop.
    busy: Option<&'a AtomicBool>,
    /// 7.3: the device's post-processing turn, given back on drop.
    _turn: Option<Guard<'a, (), MutexBackend>>,
}

impl Drop for PostProcessing<'_> {
    fn drop(&mut self) {
        if let Some(busy) = self.busy {
            busy.store(false, Relaxed);
        }
    }
}

impl WritebackState {
    pub(super) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            limit_enabled: AtomicBool::new(false),
            limit: AtomicU64::new(0),
            batch_size: AtomicU32::new(DEFAULT_BATCH_SIZE),
            compressed: AtomicBool::new(false),
            busy: AtomicBool::new(false),
            turn <- new_mutex!((), "Zram::post_processing"),
        })
    }

    /// Starts a post-processing (with `init_lock` held for reading): on 6.12 `EAGAIN` while
    /// one runs (C 6.12), on 7.3 after the one running has ended (C 7.3).
    pub(super) fn start(&self) -> Result<PostProcessing<'_>> {
        if cfg!(zram_abi_7_3) {
            Ok(PostProcessing {
                busy: None,
                _turn: Some(self.turn.lock()),
            })
        } else if self.busy.swap(true, Relaxed) {
            Err(EAGAIN)
        } else {
            Ok(PostProcessing {
                busy: Some(&self.busy),
                _turn: None,
            })
        }
    }

    /// What the attribute writes that C 7.3 makes wait for a post-processing (`idle`,
    /// `compact`, `mem_used_max`) hold, with `init_lock` held for reading: on 7.3 the
    /// post-processing turn, so that each waits for a running one and none starts meanwhile;
    /// nothing on 6.12.
    pub(super) fn turn_7_3(&self) -> Option<Guard<'_, (), MutexBackend>> {
        cfg!(zram_abi_7_3).then(|| self.turn.lock())
    }

    /// Whether an initialisation now writes pages back compressed.
    pub(super) fn compressed(&self) -> bool {
        self.compressed.load(Relaxed)
    }

    /// `writeback_batch_size`, as a count.
    fn batch_size(&self) -> usize {
        usize::try_from(self.batch_size.load(Relaxed)).unwrap_or(usize::MAX)
    }

    /// Whether the budget is enabled.
    fn limit_enabled(&self) -> bool {
        self.limit_enabled.load(Relaxed)
    }

    /// Whether the budget is spent (C: `wb_limit_enable && !bd_wb_limit`).
    fn limit_spent(&self) -> bool {
        self.limit_enabled.load(Relaxed) && self.limit.load(Relaxed) == 0
    }

    /// Takes one page off the budget when it is enabled and not spent; returns whether it did.
    /// (C 6.12 wraps below zero with pages above 4 KiB; this stops at 0.)
    fn spend_page(&self) -> bool {
        self.limit_enabled.load(Relaxed)
            && self
                .limit
                .fetch_update(Relaxed, Relaxed, |limit| {
                    (limit > 0).then(|| limit.saturating_sub(FOUR_K_PER_PAGE))
                })
                .is_ok()
    }

    /// Gives back a page taken by [`Self::spend_page`] (C 7.3's rollback of a failed write).
    fn refund_page(&self) {
        if self.limit_enabled.load(Relaxed) {
            let _ = self.limit.fetch_update(Relaxed, Relaxed, |limit| {
                Some(limit.saturating_add(FOUR_K_PER_PAGE))
            });
        }
    }
}

/// Ends a post-processing: lets go of the storage and the backing device, then of the
/// post-processing mark, then of `init_lock`. A `reset` waiting for `init_lock` is then the last
/// user of the storage (its pool, its table) and of the exclusively opened backing device, as in
/// C, and an immediate `backing_dev` or `disksize` after it finds both gone.
pub(super) fn release(
    storage: Arc<Storage>,
    backing: Option<Arc<Backing>>,
    running: PostProcessing<'_>,
    config: ReadGuard<'_, Config>,
) {
    drop(backing);
    drop(storage);
    drop(running);
    drop(config);
}

/// `value` rounded down to a multiple of `unit` (not 0).
fn round_down(value: u64, unit: u64) -> u64 {
    value - value % unit
}

/// The errno C answers `writeback` or `idle` input it refuses with.
impl From<Refused> for Error {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Invalid => EINVAL,
            Refused::Range => ERANGE,
        }
    }
}

/// Whether the locked `slot`, holding `content`, is one `filter` writes back: stored in the
/// pool (neither same-filled nor written back already), and idle, huge or incompressible (no
/// recompression algorithm stores it smaller) where asked.
fn wanted(filter: Filter, content: SlotContent, slot: &SlotGuard<'_>) -> bool {
    match content {
        SlotContent::Stored { huge, .. } => {
            (!filter.idle || slot.is_idle())
                && (!filter.huge || huge)
                && (!filter.incompressible || slot.is_incompressible())
        }
        SlotContent::Empty | SlotContent::Same(_) | SlotContent::WrittenBack(_) => false,
    }
}

impl Zram {
    /// `backing_dev`: calls `f` with the path of the backing device, `None` when unset.
    pub(crate) fn with_backing_dev<R>(&self, f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
        let config = self.init_lock.read();
        let Some(backing) = &config.backing else {
            return Ok(f(None));
        };
        // C's room: a sysfs page less the newline.
        let mut buf = KVec::from_elem(0u8, PAGE_SIZE - 1, GFP_KERNEL)?;
        let path = backing.dev.path(&mut buf)?;
        Ok(f(Some(path)))
    }

    /// Sets the backing device (the path in `input`, up to a NUL or `PATH_MAX - 1` bytes, one
    /// trailing newline dropped), replacing and closing the previous one; `EBUSY` once
    /// initialised, else the errors of [`BackingDev::open`].
    pub(crate) fn set_backing_dev(&self, input: &[u8]) -> Result {
        let mut config = self.init_lock.write();
        if config.disksize != 0 {
            pr_info!("Can't setup backing device for initialized device\n");
            return Err(EBUSY);
        }
        let name = crate::parse::c_str(input);
        let name = &name[..name.len().min(PATH_MAX - 1)];
        let name = name.strip_suffix(b"\n").unwrap_or(name);
        let backing = Backing::new(BackingDev::open(name)?)?;
        config.backing = Some(Arc::new(backing, GFP_KERNEL)?);
        pr_info!(
            "setup backing device {}\n",
            kernel::str::BStr::from_bytes(name)
        );
        Ok(())
    }

    /// `writeback_limit_enable`.
    pub(crate) fn writeback_limit_enabled(&self) -> bool {
        let _config = self.init_lock.read();
        self.writeback.limit_enabled.load(Relaxed)
    }

    /// Sets `writeback_limit_enable` (any non-zero value enables, as C's conversion to bool).
    pub(crate) fn set_writeback_limit_enabled(&self, enabled: bool) {
        self.changing_budget(|| self.writeback.limit_enabled.store(enabled, Relaxed));
    }

    /// `writeback_limit`, in 4 KiB units.
    pub(crate) fn writeback_limit(&self) -> u64 {
        let _config = self.init_lock.read();
        self.writeback.limit.load(Relaxed)
    }

    /// Sets `writeback_limit` (4 KiB units; 7.3 rounds down to whole pages).
    pub(crate) fn set_writeback_limit(&self, limit: u64) {
        let limit = if cfg!(zram_abi_7_3) {
            round_down(limit, FOUR_K_PER_PAGE)
        } else {
            limit
        };
        self.changing_budget(|| self.writeback.limit.store(limit, Relaxed));
    }

    /// Runs `f` under `init_lock` as C takes it to change the writeback budget: for reading
    /// on 6.12 (a running writeback's budget changes at once), for writing on 7.3 (after the
    /// running writeback: C 7.3 holds its device lock for writing through one).
    fn changing_budget(&self, f: impl FnOnce()) {
        if cfg!(zram_abi_7_3) {
            let _config = self.init_lock.write();
            f();
        } else {
            let _config = self.init_lock.read();
            f();
        }
    }

    /// `writeback_batch_size`.
    pub(crate) fn writeback_batch_size(&self) -> u32 {
        let _config = self.init_lock.read();
        self.writeback.batch_size.load(Relaxed)
    }

    /// Sets `writeback_batch_size`: `EINVAL` for 0 (the setting is kept across `reset`, as C's).
    pub(crate) fn set_writeback_batch_size(&self, size: u32) -> Result {
        if size == 0 {
            return Err(EINVAL);
        }
        let _config = self.init_lock.write();
        self.writeback.batch_size.store(size, Relaxed);
        Ok(())
    }

    /// `compressed_writeback` (7.3).
    #[cfg(zram_abi_7_3)]
    pub(crate) fn compressed_writeback(&self) -> bool {
        let _config = self.init_lock.read();
        self.writeback.compressed.load(Relaxed)
    }

    /// Sets `compressed_writeback` (7.3): `EBUSY` once initialised (kept across `reset`, as
    /// C's).
    #[cfg(zram_abi_7_3)]
    pub(crate) fn set_compressed_writeback(&self, compressed: bool) -> Result {
        let config = self.init_lock.write();
        if config.disksize != 0 {
            return Err(EBUSY);
        }
        self.writeback.compressed.store(compressed, Relaxed);
        Ok(())
    }

    /// `bd_stat`: blocks of the backing device in use, pages read from it and written to it,
    /// each in 4 KiB units.
    pub(crate) fn bd_stat(&self) -> (u64, u64, u64) {
        let _config = self.init_lock.read();
        let count = self.storage().map_or(0, |storage| {
            storage
                .backing
                .as_ref()
                .map_or(0, |backing| backing.blocks.used() as u64)
        });
        let four_k = |pages: u64| pages.saturating_mul(FOUR_K_PER_PAGE);
        (
            four_k(count),
            four_k(self.stats.bd_reads.load(Relaxed)),
            four_k(self.stats.bd_writes.load(Relaxed)),
        )
    }

    /// Reads bytes `offset..offset + out.len()` of page `index`, written back to `block`: with
    /// a `dest` (`out` is then a whole page of a bio being read), by a read of the backing
    /// device chained to that bio, which completes when both have (for a page written back
    /// compressed, once a worker has decompressed it); else waiting for the device, from any
    /// context that may sleep (the I/O path included).
    pub(super) fn read_written_back(
        &self,
        storage: &Storage,
        index: usize,
        block: usize,
        offset: usize,
        out: &mut [u8],
        dest: Option<Chain<'_>>,
    ) -> Result {
        let backing = storage.backing.as_ref().ok_or(EIO)?;
        self.stats.bd_reads.fetch_add(1, Relaxed);
        match (dest, storage.compressed_writeback) {
            (Some(chain), false) => backing.dev.read_page_chained(block, chain.dest),
            (None, false) => bdev::read_page_waiting(&backing.dev, block, offset, out),
            (Some(chain), true) => {
                let owner: Arc<Storage> = chain.storage.into();
                let decompress = move |page: &mut [u8]| decompress_back(&owner, index, block, page);
                backing.dev.read_page_then(block, chain.dest, decompress)
            }
            (None, true) => {
                let end = offset
                    .checked_add(out.len())
                    .filter(|&end| end <= PAGE_SIZE)
                    .ok_or(EINVAL)?;
                let mut page = BouncePage::new()?;
                bdev::read_block_waiting(&backing.dev, block, &mut page)?;
                let bytes = page.bytes_mut();
                decompress_back(storage, index, block, bytes)?;
                out.copy_from_slice(bytes.get(offset..end).ok_or(EIO)?);
                Ok(())
            }
        }
    }

    /// `writeback`: writes pages to the backing device, as C zram of the kernel built for
    /// takes and answers the request.
    pub(crate) fn writeback(&self, input: &[u8]) -> Result {
        if cfg!(zram_abi_7_3) {
            self.writeback_7_3(input)
        } else {
            self.writeback_6_12(input)
        }
    }

    /// C 6.12: a mode word or `page_index=N`; then `EINVAL` before initialisation or for an
    /// index past the end, `EAGAIN` while another writeback runs, `ENODEV` without a backing
    /// device. Slots are taken in index order; before each, a spent budget stops with `EIO`
    /// and a full device with `ENOSPC` (whether or not the slot would be written).
    fn writeback_6_12(&self, input: &[u8]) -> Result {
        let request = writeback_args::writeback_6_12(input)?;
        // For reading until the writeback has ended (see `release`): a `reset` waits for it.
        let config = self.init_lock.read();
        let storage = self.storage().ok_or(EINVAL)?;
        let pages = storage.pages.pages();
        let (filter, range) = match request {
            Request6_12::All(filter) => (filter, 0..pages),
            Request6_12::Page(index) => {
                let index = usize::try_from(index)
                    .ok()
                    .filter(|&index| index < pages)
                    .ok_or(EINVAL)?;
                (Filter::ANY, index..index + 1)
            }
        };
        let running = self.writeback.start()?;
        let backing = config.backing.clone().ok_or(ENODEV)?;
        // No more writes in flight than slots to write (C 6.12 allocates its one page here).
        let count = self.writeback.batch_size().min(range.len());
        let result = PageWrites::new(&backing.dev, count).and_then(|writes| {
            let indexes = range.map(|index| (index, false));
            self.write_back(&storage, &backing, writes, indexes, filter)
        });
        release(storage, Some(backing), running, config);
        result
    }

    /// C 7.3: `EINVAL` before initialisation, `ENODEV` without a backing device, then the
    /// `key=value` request (its errors, and nothing written back on any); a writeback in
    /// progress is waited for. The slots the request selects are marked first and written
    /// back largest first; a spent budget stops with `EIO`, a full device with `ENOSPC`.
    fn writeback_7_3(&self, input: &[u8]) -> Result {
        // For reading until the writeback has ended (see `release`): a `reset` waits for it.
        let config = self.init_lock.read();
        // First: C takes its device lock before anything else.
        let running = self.writeback.start()?;
        let storage = self.storage().ok_or(EINVAL)?;
        let backing = config.backing.clone().ok_or(ENODEV)?;
        let result = self.writeback_selected(input, &storage, &backing);
        release(storage, Some(backing), running, config);
        result
    }

    /// C 7.3's writeback of what `input` selects, once started.
    fn writeback_selected(&self, input: &[u8], storage: &Storage, backing: &Backing) -> Result {
        // The writes' pages before the request is read, as C allocates its requests.
        let count = self.writeback.batch_size().min(storage.pages.pages());
        let writes = PageWrites::new(&backing.dev, count)?;
        let mut scans = KVec::new();
        let mut full = false;
        writeback_args::writeback_7_3(input, storage.pages.pages() as u64, |scan: Scan| {
            full |= scans.push(scan, GFP_KERNEL).is_err();
        })?;
        if full {
            return Err(ENOMEM);
        }
        let candidates = mark_candidates(storage, &scans)?;
        let ordered = candidates.iter().map(|&index| (index, true));
        self.write_back(storage, backing, writes, ordered, Filter::ANY)
    }

    /// Writes back the slots `indexes` names that `filter` wants (or, for those `marked`
    /// already, whose mark survived), with `writes` (up to `writeback_batch_size`) in flight
    /// at once.
    ///
    /// Before each slot, in C 7.3's order: a spent budget stops with `EIO`, then (with every
    /// write in flight) the oldest write is waited for, then a block is claimed, kept for the
    /// next slot if this one does not qualify, and a full device stops with `ENOSPC`. A failed
    /// write is returned once all have ended, unless a later one fails too; the others go on
    /// (as C). 7.3 charges the budget when a write is submitted and gives it back if it fails
    /// (C 7.3). C 6.12 writes one page at a time and charges a page once written back; here,
    /// on 6.12, every write in flight ends before the budget is checked while it is enabled,
    /// and before a full device or a spent budget ends the writeback, so that the answers and
    /// the budget are C 6.12's.
    fn write_back(
        &self,
        storage: &Storage,
        backing: &Backing,
        mut writes: PageWrites<'_, Pending>,
        indexes: impl Iterator<Item = (usize, bool)>,
        filter: Filter,
    ) -> Result {
        let one_at_a_time = !cfg!(zram_abi_7_3);
        let mut result = Ok(());
        page_writes::plugged(|| {
            let mut indexes = indexes;
            // A block claimed and not used yet, kept for the next page.
            let mut block = None;
            for (index, marked) in indexes.by_ref() {
                if one_at_a_time && self.writeback.limit_enabled() {
                    self.collect_all(storage, backing, &mut writes, &mut result);
                }
                if self.writeback.limit_spent() {
                    // (On 7.3 a write failing after this still has the last word, as in C.)
                    if one_at_a_time {
                        self.collect_all(storage, backing, &mut writes, &mut result);
                    }
                    result = Err(EIO);
                    if marked {
                        unmark(storage, index, Mark::Writeback);
                    }
                    break;
                }
                if writes.full() {
                    if let Some((pending, written)) = writes.collect() {
                        keep_error(
                            &mut result,
                            self.written(storage, backing, pending, written),
                        );
                    }
                }
                let mut target = block.or_else(|| backing.blocks.claim());
                if target.is_none() && one_at_a_time {
                    // The blocks of writes in flight whose slots changed come back.
                    self.collect_all(storage, backing, &mut writes, &mut result);
                    target = backing.blocks.claim();
                }
                let Some(target) = target else {
                    result = Err(ENOSPC);
                    if marked {
                        unmark(storage, index, Mark::Writeback);
                    }
                    break;
                };
                block = Some(target);
                let Some(page) = writes.page() else {
                    if marked {
                        unmark(storage, index, Mark::Writeback);
                    }
                    break;
                };
                if !self.read_for_writeback(storage, index, marked, filter, page) {
                    continue;
                }
                let charged = !one_at_a_time && self.writeback.spend_page();
                let pending = Pending {
                    index,
                    block: target,
                    charged,
                };
                block = None;
                if let Err((pending, error)) = writes.submit(target, pending) {
                    keep_error(
                        &mut result,
                        self.written(storage, backing, pending, Err(error)),
                    );
                }
                cpu::cond_resched();
            }
            // The slots marked for this writeback that it did not reach.
            for (index, marked) in indexes {
                if marked {
                    unmark(storage, index, Mark::Writeback);
                }
            }
            if let Some(unused) = block {
                backing.release(unused);
            }
            self.collect_all(storage, backing, &mut writes, &mut result);
        });
        result
    }

    /// Waits for every write in flight and ends each, keeping the last error in `result`.
    fn collect_all(
        &self,
        storage: &Storage,
        backing: &Backing,
        writes: &mut PageWrites<'_, Pending>,
        result: &mut Result,
    ) {
        while let Some((pending, written)) = writes.collect() {
            keep_error(result, self.written(storage, backing, pending, written));
        }
    }

    /// Reads slot `index` into `page` for a writeback if it qualifies, and marks it as being
    /// written back; returns whether it did.
    fn read_for_writeback(
        &self,
        storage: &Storage,
        index: usize,
        marked: bool,
        filter: Filter,
        page: &mut BouncePage,
    ) -> bool {
        let read = lock_with_stream(storage, index, |slot, stream| {
            let content = slot.content();
            let qualifies = if marked {
                slot.has_mark(Mark::Writeback)
            } else {
                !slot.has_mark(Mark::Writeback) && wanted(filter, content, slot)
            };
            if !qualifies {
                return false;
            }
            slot.set_mark(Mark::Writeback);
            let read = if storage.compressed_writeback {
                read_object_locked(slot, page.bytes_mut(), stream)
            } else {
                read_locked(slot, content, index, page.bytes_mut(), stream)
            };
            if read.is_err() {
                give_up(slot);
                return false;
            }
            true
        });
        read.is_some_and(|(_stream, read)| read)
    }

    /// Ends the write `pending` with its result `written`: the slot names the block if the
    /// write succeeded and the slot's mark survived it; otherwise the block goes back, and a
    /// failed write leaves the page in memory, gives the budget back and is returned.
    fn written(
        &self,
        storage: &Storage,
        backing: &Backing,
        pending: Pending,
        written: Result,
    ) -> Result {
        let Pending {
            index,
            block,
            charged,
        } = pending;
        let slot = storage.pages.lock(index);
        if let Err(error) = written {
            if let Some(mut slot) = slot {
                give_up(&mut slot);
            }
            if charged {
                self.writeback.refund_page();
            }
            backing.release(block);
            return Err(error);
        }
        self.stats.bd_writes.fetch_add(1, Relaxed);
        let Some(mut slot) = slot.filter(|slot| slot.has_mark(Mark::Writeback)) else {
            backing.release(block);
            return Ok(());
        };
        slot.clear_mark(Mark::Writeback);
        self.stats.stored_written_back();
        let old = slot.store_written_back(block);
        drop(slot);
        storage.removed(&self.stats, old);
        if !cfg!(zram_abi_7_3) {
            // C 6.12 charges a page once it is written back.
            self.writeback.spend_page();
        }
        Ok(())
    }
}

/// Keeps `done`'s error, if any, as the answer so far.
fn keep_error(result: &mut Result, done: Result) {
    if let Err(error) = done {
        *result = Err(error);
    }
}

/// A write to the backing device in flight: its slot, its block, and whether the budget was
/// charged for it.
struct Pending {
    index: usize,
    block: usize,
    charged: bool,
}

/// Copies the object slot `slot` holds, as it is stored (compressed, or a huge page whole),
/// into `page`, zeroes after it (C 7.3's `read_from_zspool_raw()`).
fn read_object_locked(
    slot: &SlotGuard<'_>,
    page: &mut [u8],
    stream: &mut StreamGuard<'_>,
) -> Result {
    let (scratch, _) = stream.scratch_and_decompressor();
    slot.read_object(scratch, |object, _| {
        page.get_mut(..object.len())
            .ok_or(EIO)?
            .copy_from_slice(object);
        page.get_mut(object.len()..).ok_or(EIO)?.fill(0);
        Ok(())
    })
    .unwrap_or(Err(EIO))
}

/// Decompresses in place `page`, read from `block` where page `index` was written back
/// compressed, if the slot still names the block: with the slot's size (a huge page is whole
/// already), as C 7.3's `decompress_bdev_page()`. A slot that changed meanwhile is `EIO`, with
/// the page zeroed, as in C.
fn decompress_back(storage: &Storage, index: usize, block: usize, page: &mut [u8]) -> Result {
    // With a stream of the algorithm that compressed the object.
    let found = lock_with_stream(storage, index, |slot, _| {
        slot.written_back_object()
            .filter(|object| object.block == block)
    });
    let Some((mut stream, Some(object))) = found else {
        page.fill(0);
        return Err(EIO);
    };
    if object.huge {
        return Ok(());
    }
    let size = object.size;
    let (scratch, decompressor) = stream.scratch_and_decompressor();
    let whole = scratch.get_mut(..PAGE_SIZE).ok_or(EIO)?;
    let result = decompressor.decompress(page.get(..size).ok_or(EIO)?, whole);
    if result.is_ok() {
        mem::copy_page_bytes(page, whole);
    } else {
        pr_err!("Decompression failed! page={}\n", index);
    }
    result
}

/// A writeback of a slot that failed: the mark goes, and on 6.12 the idle mark with it (C 6.12
/// marks the slot idle when it starts and unmarks it when the page stays).
fn give_up(slot: &mut SlotGuard<'_>) {
    slot.clear_mark(Mark::Writeback);
    if !cfg!(zram_abi_7_3) {
        slot.unmark_idle();
    }
}

/// Takes `mark` away from slot `index`.
pub(super) fn unmark(storage: &Storage, index: usize, mark: Mark) {
    if let Some(mut slot) = storage.pages.lock(index) {
        slot.clear_mark(mark);
    }
}

/// The size range of one of C 7.3's post-processing buckets (`PP_BUCKET_SIZE_RANGE`).
const BUCKET_BYTES: usize = 64;
/// No further entry in a bucket's list.
const END: usize = usize::MAX;

/// C 7.3's selection for `writeback`: every slot of the scans that their filter wants,
/// marked, in the order C writes them back ([`select_slots`]).
fn mark_candidates(storage: &Storage, scans: &[Scan]) -> Result<VVec<usize>> {
    select_slots(
        storage,
        scans.iter().filter_map(|scan| {
            let (Ok(start), Ok(end)) = (usize::try_from(scan.start), usize::try_from(scan.end))
            else {
                return None;
            };
            let filter = scan.filter;
            Some((start..end, move |slot: &SlotGuard<'_>, content| {
                wanted(filter, content, slot)
            }))
        }),
        Mark::Writeback,
    )
}

/// C 7.3's selection of slots for post-processing: every slot in each range whose predicate
/// wants it (and that holds an object not marked already), marked with `mark`; returned as
/// indexes in the order C processes them. C files each slot at the head of the list of its
/// size's bucket (64-byte ranges) and takes the highest non-empty bucket's head first; the
/// lists here are the same, as links between entries. Running out of memory stops the selection quietly, as
/// in C, and what was selected is processed.
pub(super) fn select_slots<P>(
    storage: &Storage,
    ranges: impl Iterator<Item = (core::ops::Range<usize>, P)>,
    mark: Mark,
) -> Result<VVec<usize>>
where
    P: Fn(&SlotGuard<'_>, SlotContent) -> bool,
{
    let mut heads = KVec::from_elem(END, PAGE_SIZE / BUCKET_BYTES + 1, GFP_KERNEL)?;
    // (index, next entry of its bucket)
    let mut entries: VVec<(usize, usize)> = VVec::new();
    'ranges: for (range, wants) in ranges {
        for index in range.start..range.end.min(storage.pages.pages()) {
            // Only a slot holding an object can be selected: the others are passed over with
            // a look at their flags.
            if !storage.pages.may_hold_object(index) {
                continue;
            }
            // Room for one more before the slot lock, under which nothing allocates: the push
            // below then never does.
            if entries.reserve(1, GFP_KERNEL).is_err() {
                break 'ranges;
            }
            let Some(mut slot) = storage.pages.lock(index) else {
                continue;
            };
            let content = slot.content();
            if slot.has_mark(mark) || !wants(&slot, content) {
                continue;
            }
            let SlotContent::Stored { size, .. } = content else {
                continue;
            };
            let Some(head) = heads.get_mut(size / BUCKET_BYTES) else {
                continue;
            };
            let entry = entries.len();
            if entries.push((index, *head), GFP_NOWAIT).is_err() {
                break 'ranges;
            }
            *head = entry;
            slot.set_mark(mark);
        }
    }
    let mut ordered = VVec::new();
    if ordered.reserve(entries.len(), GFP_KERNEL).is_err() {
        for &(index, _) in entries.iter() {
            unmark(storage, index, mark);
        }
        return Err(ENOMEM);
    }
    for &head in heads.iter().rev() {
        let mut entry = head;
        while let Some(&(index, next)) = entries.get(entry) {
            // Within the reserved room: never allocates.
            let _ = ordered.push(index, GFP_NOWAIT);
            entry = next;
        }
    }
    Ok(ordered)
}
