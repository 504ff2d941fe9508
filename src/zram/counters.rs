// SPDX-License-Identifier: GPL-2.0
//! A device's counters ([`Stats`], reset by `reset`) and the figures read from them:
//! `mm_stat`, `same_stat`, `read_stat`, `unit_stat`, `debug_stat` and `io_stat` (their text is
//! `stat_format.rs`'s, `unit_stat`'s and the other zram_rs extensions' `attrs.rs`').

use super::Zram;
use crate::abi::Abi;
use crate::slot::SlotContent;
use crate::stat_format::{DebugStat, IoStat, MmStat};
use crate::table::{Removed, PAGE_SIZE};
use crate::Kernel;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

impl Zram {
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

    /// The `read_stat` figure: reads that found every decompression context of their
    /// algorithm lent out and waited for one.
    pub(crate) fn read_stat(&self) -> u64 {
        self.stats.reads_waited.load(Relaxed)
    }

    /// The `unit_stat` figures: compression units' objects stored, pages stored in them,
    /// unit decompressions for reads, reads of units' pages, units stored page by page, reads
    /// of units' pages by requests that cover part of the unit, units' pages split off by
    /// writeback, and units decompressed straight into a read bio's pages.
    pub(crate) fn unit_stat(&self) -> [u64; 8] {
        let stats = &self.stats;
        [
            &stats.unit_objects,
            &stats.unit_pages,
            &stats.unit_decompressions,
            &stats.unit_page_reads,
            &stats.units_by_pages,
            &stats.unit_part_reads,
            &stats.unit_pages_split,
            &stats.unit_runs_read,
        ]
        .map(|counter| counter.load(Relaxed))
    }

    /// The `debug_stat` figures (under `init_lock`, as C).
    pub(crate) fn debug_stat(&self) -> DebugStat {
        let _config = self.init_lock.read();
        DebugStat {
            // C zram 7.x no longer counts stalls (its writes allocate once, with reclaim);
            // zram_rs keeps its fast and slow paths and shows the count only where C does.
            writestall: Kernel::SHOWS_WRITESTALL.then(|| self.stats.writestall.load(Relaxed)),
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

/// Counters, all reset by `reset`.
///
/// The counters of what is stored (`pages_stored`, `compr_data_size`, `same_pages`,
/// `zero_pages`, `huge_pages`) count a new content under the lock of its slot, before the
/// unlock that lets anyone else see (and remove) it, and take away an old content only after
/// taking it out of its slot, under the lock or after it. A page's addition therefore comes
/// before its removal in every counter's order of changes, and no reader sees a counter below
/// zero.
#[derive(Default)]
pub(super) struct Stats {
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
    /// Page reads that waited for a decompression context.
    reads_waited: AtomicU64,
    /// Compression units' objects stored (counted with their first page, as
    /// `compr_data_size` counts their bytes).
    unit_objects: AtomicU64,
    /// Pages stored in units' objects.
    unit_pages: AtomicU64,
    /// Units decompressed to read one of their pages.
    unit_decompressions: AtomicU64,
    /// Reads of units' pages.
    unit_page_reads: AtomicU64,
    /// Whole units stored page by page.
    units_by_pages: AtomicU64,
    /// Reads of units' pages by requests that cover only part of the unit.
    unit_part_reads: AtomicU64,
    /// Units' pages written back on their own (split off their unit).
    unit_pages_split: AtomicU64,
    /// Units decompressed straight into a read bio's pages.
    unit_runs_read: AtomicU64,
}

/// An event a counter of [`Stats`] counts.
#[derive(Clone, Copy)]
pub(super) enum Event {
    /// A read bio failed (`io_stat`).
    FailedRead,
    /// A write bio failed (`io_stat`).
    FailedWrite,
    /// A page freed by a discard or swap's notification (`io_stat`).
    NotifyFree,
    /// Swap's notification found its slot locked and freed nothing (`debug_stat`).
    MissFree,
    /// A write's allocation without reclaim failed (`debug_stat`, 6.12).
    WriteStall,
    /// A page read from the backing device (`bd_stat`).
    BdRead,
    /// A page written to the backing device (`bd_stat`).
    BdWrite,
    /// A page read found every decompression context lent out (`read_stat`).
    ReadWaited,
    /// A unit decompressed for a read (`unit_stat`).
    UnitDecompressed,
    /// A unit's page read (`unit_stat`).
    UnitPageRead,
    /// A whole unit stored page by page (`unit_stat`).
    UnitByPages,
    /// A unit's page read by a request that covers part of the unit (`unit_stat`).
    UnitPartRead,
    /// A unit's page written back on its own (`unit_stat`).
    UnitPageSplit,
    /// A unit decompressed straight into a read bio's pages (`unit_stat`).
    UnitRunRead,
}

impl Stats {
    /// Counts `event`.
    #[inline(always)]
    pub(super) fn count(&self, event: Event) {
        let counter = match event {
            Event::FailedRead => &self.failed_reads,
            Event::FailedWrite => &self.failed_writes,
            Event::NotifyFree => &self.notify_free,
            Event::MissFree => &self.miss_free,
            Event::WriteStall => &self.writestall,
            Event::BdRead => &self.bd_reads,
            Event::BdWrite => &self.bd_writes,
            Event::ReadWaited => &self.reads_waited,
            Event::UnitDecompressed => &self.unit_decompressions,
            Event::UnitPageRead => &self.unit_page_reads,
            Event::UnitByPages => &self.units_by_pages,
            Event::UnitPartRead => &self.unit_part_reads,
            Event::UnitPageSplit => &self.unit_pages_split,
            Event::UnitRunRead => &self.unit_runs_read,
        };
        counter.fetch_add(1, Relaxed);
    }

    /// Pages read from and written to the backing device.
    pub(super) fn backing_pages(&self) -> (u64, u64) {
        (self.bd_reads.load(Relaxed), self.bd_writes.load(Relaxed))
    }

    /// Records the pool's size in pages, `used`, for `mem_used_max`.
    #[inline(always)]
    pub(super) fn pool_used(&self, used: u64) {
        // Read first: an atomic read-modify-write on every write would bounce the line.
        if used > self.max_used_pages.load(Relaxed) {
            self.max_used_pages.fetch_max(used, Relaxed);
        }
    }

    /// Sets `mem_used_max` to `used` pages.
    pub(super) fn reset_max_used(&self, used: u64) {
        self.max_used_pages.store(used, Relaxed);
    }

    pub(super) fn reset(&self) {
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
            &self.reads_waited,
            &self.unit_objects,
            &self.unit_pages,
            &self.unit_decompressions,
            &self.unit_page_reads,
            &self.units_by_pages,
            &self.unit_part_reads,
            &self.unit_pages_split,
            &self.unit_runs_read,
        ] {
            counter.store(0, Relaxed);
        }
    }

    /// Accounts for a slot's content going away (its backing block, if any, is given back by
    /// [`Storage::removed`]).
    #[inline(always)]
    pub(super) fn removed(&self, old: Removed) {
        match old.0 {
            SlotContent::Empty => return,
            // The bytes the page's release freed.
            SlotContent::InUnit(freed) => return self.removed_unit_page(freed),
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

    /// [`Self::removed`] of a unit's page, whose release freed `freed` bytes.
    #[cold]
    #[inline(never)]
    fn removed_unit_page(&self, freed: usize) {
        self.unit_object_freed(freed);
        self.unit_pages.fetch_sub(1, Relaxed);
        self.pages_stored.fetch_sub(1, Relaxed);
    }

    /// Accounts for a same-filled page being stored.
    pub(super) fn stored_same(&self, word: usize) {
        self.same_pages.fetch_add(1, Relaxed);
        if word == 0 {
            self.zero_pages.fetch_add(1, Relaxed);
        }
        self.pages_stored.fetch_add(1, Relaxed);
    }

    /// Accounts for a page written back (which still counts as stored, as in C).
    pub(super) fn stored_written_back(&self) {
        self.pages_stored.fetch_add(1, Relaxed);
    }

    /// Accounts for a unit's page being stored, and for the unit's object of `len` bytes with
    /// the first of its pages (`first`).
    pub(super) fn stored_unit_page(&self, first: bool, len: usize) {
        if first {
            self.compr_data_size.fetch_add(len as u64, Relaxed);
            self.unit_objects.fetch_add(1, Relaxed);
        }
        self.unit_pages.fetch_add(1, Relaxed);
        self.pages_stored.fetch_add(1, Relaxed);
    }

    /// Accounts for a unit's object of `freed` bytes going away (nothing for 0: no object
    /// went).
    pub(super) fn unit_object_freed(&self, freed: usize) {
        if freed != 0 {
            self.compr_data_size.fetch_sub(freed as u64, Relaxed);
            self.unit_objects.fetch_sub(1, Relaxed);
        }
    }

    /// Accounts for an object of `size` bytes being stored.
    pub(super) fn stored_object(&self, size: usize, huge: bool) {
        self.compr_data_size.fetch_add(size as u64, Relaxed);
        if huge {
            self.huge_pages.fetch_add(1, Relaxed);
            self.huge_pages_since.fetch_add(1, Relaxed);
        }
        self.pages_stored.fetch_add(1, Relaxed);
    }
}
