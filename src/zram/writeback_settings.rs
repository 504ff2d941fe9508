// SPDX-License-Identifier: GPL-2.0
//! The writeback settings, which survive `reset` (as C's): the budget (`writeback_limit`,
//! `writeback_limit_enable`), `writeback_batch_size` and `compressed_writeback`, with their
//! attributes and the budget's charging.

use super::Zram;
use crate::abi::Abi;
use crate::table::PAGE_SIZE;
use crate::Kernel;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;

impl Zram {
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

    /// Sets `writeback_limit` (4 KiB units; rounded down to whole pages where the ABI says).
    pub(crate) fn set_writeback_limit(&self, limit: u64) {
        let limit = if Kernel::WRITEBACK_LIMIT_WHOLE_PAGES {
            round_down(limit, FOUR_K_PER_PAGE)
        } else {
            limit
        };
        self.changing_budget(|| self.writeback.limit.store(limit, Relaxed));
    }

    /// Runs `f` under `init_lock` as C takes it to change the writeback budget: for reading
    /// (a running writeback's budget changes at once, 6.12), or for writing where the change
    /// waits for a running writeback (C 7.3 holds its device lock for writing through one).
    fn changing_budget(&self, f: impl FnOnce()) {
        if Kernel::BUDGET_WAITS_FOR_WRITEBACK {
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
    pub(crate) fn compressed_writeback(&self) -> bool {
        let _config = self.init_lock.read();
        self.writeback.compressed.load(Relaxed)
    }

    /// Sets `compressed_writeback` (7.3): `EBUSY` once initialised (kept across `reset`, as
    /// C's).
    pub(crate) fn set_compressed_writeback(&self, compressed: bool) -> Result {
        let config = self.init_lock.write();
        if config.disksize != 0 {
            return Err(EBUSY);
        }
        self.writeback.compressed.store(compressed, Relaxed);
        Ok(())
    }
}

/// `writeback_batch_size` of a new device (C's).
const DEFAULT_BATCH_SIZE: u32 = 32;

/// 4 KiB units per page: `writeback_limit` and `bd_stat` count in 4 KiB (C's `FOUR_K()`).
pub(super) const FOUR_K_PER_PAGE: u64 = (PAGE_SIZE / 4096) as u64;

/// The writeback settings, which survive `reset` (as C's).
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
}

impl WritebackState {
    /// C's defaults: no budget, batches of 32, pages written back decompressed.
    pub(super) const fn new() -> Self {
        Self {
            limit_enabled: AtomicBool::new(false),
            limit: AtomicU64::new(0),
            batch_size: AtomicU32::new(DEFAULT_BATCH_SIZE),
            compressed: AtomicBool::new(false),
        }
    }

    /// Whether an initialisation now writes pages back compressed.
    pub(super) fn compressed(&self) -> bool {
        self.compressed.load(Relaxed)
    }

    /// `writeback_batch_size`, as a count.
    pub(super) fn batch_size(&self) -> usize {
        usize::try_from(self.batch_size.load(Relaxed)).unwrap_or(usize::MAX)
    }

    /// Whether the budget is enabled.
    pub(super) fn limit_enabled(&self) -> bool {
        self.limit_enabled.load(Relaxed)
    }

    /// Whether the budget is spent (C: `wb_limit_enable && !bd_wb_limit`).
    pub(super) fn limit_spent(&self) -> bool {
        self.limit_enabled.load(Relaxed) && self.limit.load(Relaxed) == 0
    }

    /// Takes one page off the budget when it is enabled and not spent; returns whether it did.
    /// (C 6.12 wraps below zero with pages above 4 KiB; this stops at 0.)
    pub(super) fn spend_page(&self) -> bool {
        self.limit_enabled.load(Relaxed)
            && self
                .limit
                .fetch_update(Relaxed, Relaxed, |limit| {
                    (limit > 0).then(|| limit.saturating_sub(FOUR_K_PER_PAGE))
                })
                .is_ok()
    }

    /// Gives back a page taken by [`Self::spend_page`] (C 7.3's rollback of a failed write).
    pub(super) fn refund_page(&self) {
        if self.limit_enabled.load(Relaxed) {
            let _ = self.limit.fetch_update(Relaxed, Relaxed, |limit| {
                Some(limit.saturating_add(FOUR_K_PER_PAGE))
            });
        }
    }
}

/// `value` rounded down to a multiple of `unit` (not 0).
fn round_down(value: u64, unit: u64) -> u64 {
    value - value % unit
}
