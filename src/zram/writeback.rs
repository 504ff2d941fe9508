// SPDX-License-Identifier: GPL-2.0
//! The `writeback` operation, as C zram of the kernel built for takes and answers it: which
//! slots it takes (in index order, or C 7.3's marked selection), their reads, the batched
//! writes to the backing device ([`PageWrites`]), the budget's charges, and each write's end.
//!
//! A writeback holds `init_lock` for reading from start to end (so that `mm_stat` and the other
//! readers answer while it runs, and `reset` waits for it), and is the device's post-processing
//! in progress ([`PostProcessing`]); it lets go of the storage and the backing device before
//! `init_lock`, so a waiting `reset` is their last user. A page being written
//! back keeps its slot's content, marked ([`SlotGuard::set_mark`]); the slot changes to
//! the written-back block only if the mark survived the write, that is if nobody changed,
//! freed or read the page meanwhile (C's `ZRAM_UNDER_WB` / `ZRAM_PP_SLOT`). A failed write
//! leaves the page in memory.

use super::backing::Backing;
use super::counters::Event;
use super::post_process::{release, select_slots, unmark};
use super::slot_access::{lock_with_reader, read_locked};
use super::{Storage, Zram};
use crate::abi::{Abi, Selection};
use crate::comp::ReaderGuard;
use crate::kapi::bounce::BouncePage;
use crate::kapi::cpu;
use crate::kapi::page_writes::{self, PageWrites};
use crate::slot::SlotContent;
use crate::table::{Mark, SlotGuard};
use crate::writeback_args::{self, Filter, Request6_12, Scan};
use crate::Kernel;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KVec, VVec};
use kernel::prelude::*;

/// Whether the locked `slot`, holding `content`, is one `filter` writes back: stored in the
/// pool (neither same-filled nor written back already), and idle, huge or incompressible (no
/// recompression algorithm stores it smaller) where asked.
///
/// A page of a compression unit is written back on its own, decompressed (the unit is split
/// page by page; its object goes with its last page), except by a device that writes back
/// `compressed` objects: a unit's object is not one page's (Documentation/zram_rs.rst,
/// "Compression units"). A unit's page is never huge nor marked incompressible.
fn wanted(filter: Filter, compressed: bool, content: SlotContent, slot: &SlotGuard<'_>) -> bool {
    let (huge, incompressible) = match content {
        SlotContent::Stored { huge, .. } => (huge, slot.is_incompressible()),
        SlotContent::InUnit(_) if !compressed => (false, false),
        SlotContent::Empty
        | SlotContent::Same(_)
        | SlotContent::WrittenBack(_)
        | SlotContent::InUnit(_) => return false,
    };
    (!filter.idle || slot.is_idle())
        && (!filter.huge || huge)
        && (!filter.incompressible || incompressible)
}

impl Zram {
    /// `writeback`: writes pages to the backing device, as C zram of the kernel built for
    /// takes and answers the request.
    pub(crate) fn writeback(&self, input: &[u8]) -> Result {
        match Kernel::SELECTION {
            Selection::IndexOrder => self.writeback_in_index_order(input),
            Selection::MarkedLargestFirst => self.writeback_marked(input),
        }
    }

    /// C 6.12: a mode word or `page_index=N`; then `EINVAL` before initialisation or for an
    /// index past the end, `EAGAIN` while another writeback runs, `ENODEV` without a backing
    /// device. Slots are taken in index order; before each, a spent budget stops with `EIO`
    /// and a full device with `ENOSPC` (whether or not the slot would be written).
    fn writeback_in_index_order(&self, input: &[u8]) -> Result {
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
        let running = self.post_processing.start()?;
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
    fn writeback_marked(&self, input: &[u8]) -> Result {
        // For reading until the writeback has ended (see `release`): a `reset` waits for it.
        let config = self.init_lock.read();
        // First: C takes its device lock before anything else.
        let running = self.post_processing.start()?;
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
        writes: PageWrites<'_, Pending>,
        indexes: impl Iterator<Item = (usize, bool)>,
        filter: Filter,
    ) -> Result {
        let mut run = Run {
            zram: self,
            storage,
            backing,
            writes,
            block: None,
            result: Ok(()),
        };
        page_writes::plugged(|| {
            let mut indexes = indexes;
            for (index, marked) in indexes.by_ref() {
                if !run.step(index, marked, filter) {
                    if marked {
                        unmark(storage, index, Mark::Writeback);
                    }
                    break;
                }
            }
            // The slots marked for this writeback that it did not reach.
            for (index, marked) in indexes {
                if marked {
                    unmark(storage, index, Mark::Writeback);
                }
            }
            run.finish();
        });
        run.result
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
        let read = lock_with_reader(storage, index, |slot, reader| {
            let content = slot.content();
            let qualifies = if marked {
                slot.has_mark(Mark::Writeback)
            } else {
                !slot.has_mark(Mark::Writeback)
                    && wanted(filter, storage.compressed_writeback, content, slot)
            };
            if !qualifies {
                return false;
            }
            slot.set_mark(Mark::Writeback);
            let read = if storage.compressed_writeback {
                read_object_locked(slot, page.bytes_mut(), reader)
            } else {
                read_locked(
                    slot,
                    content,
                    index,
                    page.bytes_mut(),
                    reader,
                    &self.stats,
                    false,
                )
            };
            if read.is_err() {
                give_up(slot);
                return false;
            }
            true
        });
        read.is_some_and(|(_reader, read)| read)
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
        self.stats.count(Event::BdWrite);
        let Some(mut slot) = slot.filter(|slot| slot.has_mark(Mark::Writeback)) else {
            backing.release(block);
            return Ok(());
        };
        slot.clear_mark(Mark::Writeback);
        self.stats.stored_written_back();
        let old = slot.store_written_back(block);
        drop(slot);
        if matches!(old.0, SlotContent::InUnit(_)) {
            self.stats.count(Event::UnitPageSplit);
        }
        storage.removed(&self.stats, old);
        if Kernel::WRITEBACK_ONE_AT_A_TIME {
            // C 6.12 charges a page once it is written back.
            self.writeback.spend_page();
        }
        Ok(())
    }
}

/// A writeback while it runs over its slots ([`Zram::write_back`]).
struct Run<'a> {
    zram: &'a Zram,
    storage: &'a Storage,
    backing: &'a Backing,
    /// The writes in flight, up to `writeback_batch_size`.
    writes: PageWrites<'a, Pending>,
    /// A block claimed and not used yet, kept for the next page.
    block: Option<usize>,
    /// The answer so far: the last error.
    result: Result,
}

impl Run<'_> {
    /// Writes back slot `index` if it qualifies; returns whether to go on with the next one
    /// (not after a spent budget, `EIO`, or a full device, `ENOSPC`). See [`Zram::write_back`]
    /// for the order of the checks.
    fn step(&mut self, index: usize, marked: bool, filter: Filter) -> bool {
        let one_at_a_time = Kernel::WRITEBACK_ONE_AT_A_TIME;
        let budget = &self.zram.writeback;
        if one_at_a_time && budget.limit_enabled() {
            self.collect_all();
        }
        if budget.limit_spent() {
            // (On 7.3 a write failing after this still has the last word, as in C.)
            if one_at_a_time {
                self.collect_all();
            }
            self.result = Err(EIO);
            return false;
        }
        if self.writes.full() {
            if let Some((pending, written)) = self.writes.collect() {
                self.end(pending, written);
            }
        }
        let Some(target) = self.claim_block() else {
            self.result = Err(ENOSPC);
            return false;
        };
        self.block = Some(target);
        let Some(page) = self.writes.page() else {
            return false;
        };
        if !self
            .zram
            .read_for_writeback(self.storage, index, marked, filter, page)
        {
            return true;
        }
        let charged = !one_at_a_time && budget.spend_page();
        let pending = Pending {
            index,
            block: target,
            charged,
        };
        self.block = None;
        if let Err((pending, error)) = self.writes.submit(target, pending) {
            self.end(pending, Err(error));
        }
        cpu::cond_resched();
        true
    }

    /// The block kept from the last slot, or a new one; one at a time (6.12), with a full
    /// device, the blocks of the writes in flight whose slots changed come back first.
    fn claim_block(&mut self) -> Option<usize> {
        let target = self.block.or_else(|| self.backing.blocks.claim());
        if target.is_none() && Kernel::WRITEBACK_ONE_AT_A_TIME {
            self.collect_all();
            return self.backing.blocks.claim();
        }
        target
    }

    /// Ends the write `pending` with its result `written`, keeping its error.
    fn end(&mut self, pending: Pending, written: Result) {
        let ended = self
            .zram
            .written(self.storage, self.backing, pending, written);
        keep_error(&mut self.result, ended);
    }

    /// Waits for every write in flight and ends each.
    fn collect_all(&mut self) {
        while let Some((pending, written)) = self.writes.collect() {
            self.end(pending, written);
        }
    }

    /// Gives back the block kept for a next slot and waits for the writes in flight.
    fn finish(&mut self) {
        if let Some(unused) = self.block.take() {
            self.backing.release(unused);
        }
        self.collect_all();
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
    reader: &mut ReaderGuard<'_>,
) -> Result {
    let (scratch, _) = reader.scratch_and_decompressor();
    slot.read_object(scratch, |object, _| {
        page.get_mut(..object.len())
            .ok_or(EIO)?
            .copy_from_slice(object);
        page.get_mut(object.len()..).ok_or(EIO)?.fill(0);
        Ok(())
    })
    .unwrap_or(Err(EIO))
}

/// A writeback of a slot that failed: the mark goes, and on 6.12 the idle mark with it (C 6.12
/// marks the slot idle when it starts and unmarks it when the page stays).
fn give_up(slot: &mut SlotGuard<'_>) {
    slot.clear_mark(Mark::Writeback);
    if Kernel::FAILED_WRITEBACK_UNMARKS_IDLE {
        slot.unmark_idle();
    }
}

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
            let compressed = storage.compressed_writeback;
            Some((start..end, move |slot: &SlotGuard<'_>, content| {
                wanted(filter, compressed, content, slot)
            }))
        }),
        Mark::Writeback,
    )
}
