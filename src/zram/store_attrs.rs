// SPDX-License-Identifier: GPL-2.0
//! The attributes that act on a device's stored pages outside I/O: `mem_limit`,
//! `mem_used_max`'s reset, `idle`, `compact`, `same_detection` and `compress_unit`.

use super::Zram;
use crate::idle::Cutoff;
use crate::table::{Mark, PAGE_SIZE};
use crate::unit::UnitSize;
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;

impl Zram {
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
        let _turn = self.post_processing.wait();
        if let Some(storage) = self.storage() {
            self.stats
                .reset_max_used(storage.pages.pool().total_pages());
        }
    }

    /// `idle`: marks every slot holding an object that `cutoff` finds idle, and unmarks the
    /// others (a slot being recompressed after its recompression), or changes no mark for
    /// [`Cutoff::Unchanged`]; `EINVAL` when not initialised. Under `init_lock`, as C: a
    /// `reset` waits for it. On 7.x a post-processing in progress is waited for first, and none
    /// starts during the walk (C 7.x runs them under its device lock, which `idle` takes too).
    pub(crate) fn mark_idle(&self, cutoff: Cutoff) -> Result {
        let _config = self.init_lock.read();
        let _turn = self.post_processing.wait();
        let storage = self.storage().ok_or(EINVAL)?;
        if cutoff == Cutoff::Unchanged {
            return Ok(());
        }
        for index in 0..storage.pages.pages() {
            // A slot being recompressed is judged once its recompression is over, as in C,
            // whose recompression holds the slot's lock throughout (on 7.3 the whole
            // recompression was waited for above): the recompression's unlock that takes the
            // mark away wakes this wait.
            while let Some(mut slot) = storage.pages.lock(index) {
                if !slot.has_mark(Mark::Recompress) {
                    slot.mark_idle(cutoff);
                    break;
                }
                drop(slot);
                storage.pages.wait_while_marked(index, Mark::Recompress);
            }
        }
        Ok(())
    }

    /// Runs pool compaction; `EINVAL` when not initialised. Under `init_lock`, as C: a `reset`
    /// waits for it, and then frees the pool itself; on 7.3 after a running post-processing,
    /// as C 7.3.
    pub(crate) fn compact(&self) -> Result {
        let _config = self.init_lock.read();
        let _turn = self.post_processing.wait();
        let storage = self.storage().ok_or(EINVAL)?;
        storage.pages.pool().compact();
        Ok(())
    }

    /// Whether writes look for same-filled pages.
    pub(crate) fn same_detection(&self) -> bool {
        self.same_detection.load(Relaxed)
    }

    /// Turns same-filled page detection on or off for the writes that follow.
    pub(crate) fn set_same_detection(&self, enabled: bool) {
        self.same_detection.store(enabled, Relaxed);
    }

    /// The compression unit the device has, or the next initialisation uses.
    pub(crate) fn unit_size(&self) -> UnitSize {
        UnitSize::from_shift(self.unit_shift.load(Relaxed)).unwrap_or(UnitSize::PAGE)
    }

    /// Sets the compression unit of the next initialisation; `EBUSY` once initialised.
    pub(crate) fn set_unit_size(&self, size: UnitSize) -> Result {
        let config = self.init_lock.write();
        if config.disksize != 0 {
            return Err(EBUSY);
        }
        self.unit_shift.store(size.shift(), Relaxed);
        Ok(())
    }
}
