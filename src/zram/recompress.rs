// SPDX-License-Identifier: GPL-2.0
//! `recompress`: stores again, with a recompression algorithm, the pages whose objects that
//! algorithm puts in a smaller zsmalloc size class, as C zram of the kernel built for selects
//! and treats them. 6.12 walks the slots in index order and tries the configured priorities
//! above each object's own, lower first; 7.3 uses exactly one priority and takes the selected
//! slots largest first. A page that no algorithm (6.12) or the last one (7.3) shrinks is marked
//! incompressible: recompression skips it, `writeback incompressible` takes it.
//!
//! A recompression is the device's post-processing, one at a time with writeback, and holds
//! `init_lock` for reading from start to end (`reset` waits for it). A page is decompressed
//! under its slot's lock, compressed again without it, and stored only if its slot kept its
//! recompression mark meanwhile, that is if its content neither changed nor went (C holds the
//! slot's lock throughout; a read meanwhile leaves the mark, as a read waits in C, and keeps
//! its access time, as if it came after; an `idle` write waits for the slot, as in C). On 7.3 the
//! selected slots carry the post-processing mark (`ZRAM_PP_SLOT`, [`Mark::Writeback`]) until
//! their turn: an access before it takes the mark away and the slot is skipped, as in C.

use super::counters::Stats;
use super::post_process::{release, select_slots, unmark};
use super::slot_access::{lock_with_reader_of, read_locked, read_plain, Plain};
use super::{Storage, Zram};
use crate::abi::{Abi, Selection};
use crate::kapi::bounce::BouncePage;
use crate::kapi::cpu;
use crate::kapi::zspool::ZsHandle;
use crate::recompress_args::{self, Mode, Recompress};
use crate::slot::{Priority, SlotContent};
use crate::table::Mark;
use crate::table::SlotGuard;
use crate::Kernel;
use core::ops::Range;
use kernel::prelude::*;

/// The priorities one slot may be recompressed with.
#[derive(Clone)]
enum Targets {
    /// 6.12: those of the range that have an algorithm, above the object's own, lower first;
    /// the page is incompressible when all the device's recompression algorithms fail.
    Range(Range<usize>),
    /// 7.3: this one; the page is incompressible when it is the last priority and fails.
    One(Priority),
}

impl Zram {
    /// `recompress`, as C zram of the kernel built for takes and answers it.
    pub(crate) fn recompress(&self, input: &[u8]) -> Result {
        let request = Kernel::recompress_request(input)?;
        match Kernel::SELECTION {
            Selection::IndexOrder => self.recompress_in_index_order(&request),
            Selection::MarkedLargestFirst => self.recompress_marked(&request),
        }
    }

    /// C 6.12: `EINVAL` for a threshold at or above the huge class or before initialisation,
    /// `EAGAIN` while a writeback runs, `EINVAL` for an `algo` no priority from the first one
    /// tried has; then every slot in index order.
    fn recompress_in_index_order(&self, request: &Recompress<'_>) -> Result {
        // Before any lock, as C.
        check_threshold(request, self.huge_class_size())?;
        // For reading until the recompression has ended (see `release`): a `reset` waits.
        let config = self.init_lock.read();
        let storage = self.storage().ok_or(EINVAL)?;
        let running = self.post_processing.start()?;
        let choice = self.choice.lock();
        let range = recompress_args::priorities_6_12(request, |index| choice.name_at(index));
        drop(choice);
        let range = range.ok_or(EINVAL)?;
        let result = self.recompress_in_order(&storage, request, range);
        release(storage, None, running, config);
        result
    }

    /// C 6.12's walk: every slot in index order, until the budget is spent or a slot fails.
    fn recompress_in_order(
        &self,
        storage: &Storage,
        request: &Recompress<'_>,
        range: Range<usize>,
    ) -> Result {
        let mut page = BouncePage::new()?;
        let mut budget = request.max_pages;
        let pages = storage.pages.pages();
        let mut next = 0;
        while next < pages && budget != 0 {
            // Slots without an object are passed over with a look at their flags; the
            // scheduler gets a chance after every slot that holds one and every 64 others.
            let end = next.saturating_add(64).min(pages);
            let Some(index) = storage.pages.next_object_hint(next..end) else {
                cpu::cond_resched();
                next = end;
                continue;
            };
            let targets = Targets::Range(range.clone());
            self.recompress_slot(storage, index, &mut page, &mut budget, request, targets)?;
            cpu::cond_resched();
            // No overflow: below `pages`.
            next = index + 1;
        }
        Ok(())
    }

    /// C 7.3: `EINVAL` for a threshold at or above the huge class; a post-processing in
    /// progress is waited for; then `EINVAL` before initialisation, for a priority out of
    /// range, an `algo` that is not the priority's or no priority's, or a priority without an
    /// algorithm. The slots that qualify are marked first, then recompressed largest first.
    fn recompress_marked(&self, request: &Recompress<'_>) -> Result {
        // Before any lock, as C.
        check_threshold(request, self.huge_class_size())?;
        // For reading until the recompression has ended (see `release`): a `reset` waits.
        let config = self.init_lock.read();
        // C takes its device lock here.
        let running = self.post_processing.start()?;
        let storage = self.storage().ok_or(EINVAL)?;
        let choice = self.choice.lock();
        let priority = recompress_args::priority_7_3(request, |index| choice.name_at(index));
        drop(choice);
        let priority = priority.ok_or(EINVAL)?;
        let result = self.recompress_selected(&storage, request, priority);
        release(storage, None, running, config);
        result
    }

    /// C 7.3's recompression with `priority` of the slots `request` selects, once started.
    fn recompress_selected(
        &self,
        storage: &Storage,
        request: &Recompress<'_>,
        priority: Priority,
    ) -> Result {
        let mut page = BouncePage::new()?;
        let mode = request.mode;
        let candidates = select_slots(
            storage,
            core::iter::once((0..storage.pages.pages(), |slot: &SlotGuard<'_>, content| {
                match content {
                    SlotContent::Stored { huge, .. } => {
                        (!mode.idle || slot.is_idle())
                            && (!mode.huge || huge)
                            && !slot.is_incompressible()
                            && slot.priority() < priority
                    }
                    _ => false,
                }
            })),
            // C's `ZRAM_PP_SLOT`: an access before the slot's turn takes it away.
            Mark::Writeback,
        )?;
        let mut budget = request.max_pages;
        let mut result = Ok(());
        for &index in candidates.iter() {
            if budget > 0 && result.is_ok() {
                let targets = Targets::One(priority);
                result =
                    self.recompress_slot(storage, index, &mut page, &mut budget, request, targets);
                cpu::cond_resched();
            }
            // Every selected slot loses its mark, processed or not (C's `release_pp_ctl`).
            unmark(storage, index, Mark::Writeback);
        }
        result
    }

    /// Recompresses slot `index` if it still qualifies and its object is at least
    /// `threshold` bytes: decompresses it into `page` (the page is no longer idle from then,
    /// as in C), then compresses it with each of `targets` above its own priority until one
    /// gives a smaller size class (and, with a threshold, fewer bytes than it); each slot tried
    /// takes one from `budget`. An error stops the whole recompression, as in C. The slot is
    /// marked for recompression here and unmarked before the return; on 7.3 it must still
    /// carry the post-processing mark of its selection (the caller takes that away).
    fn recompress_slot(
        &self,
        storage: &Storage,
        index: usize,
        page: &mut BouncePage,
        budget: &mut u64,
        request: &Recompress<'_>,
        targets: Targets,
    ) -> Result {
        let wanted = Wanted {
            selected: matches!(targets, Targets::One(_)),
            mode: request.mode,
            threshold: request.threshold as usize,
        };
        let Some((old_size, current)) =
            read_for_recompression(storage, index, page, &wanted, &self.stats)?
        else {
            return Ok(());
        };
        let result = self.recompress_object(
            storage,
            index,
            page,
            budget,
            wanted.threshold,
            &targets,
            old_size,
            current,
        );
        if result.is_err() {
            // (Every other end takes the marks away itself.)
            if let Some(mut slot) = storage.pages.lock(index) {
                unmark_recompressed(&mut slot);
            }
        }
        result
    }

    /// The second half of [`Self::recompress_slot`]: the page in `page` was stored as an object
    /// of `old_size` bytes by the algorithm of `current`, and its slot is marked. Unless it
    /// fails, the slot ends unmarked: by the store of the new object, by whatever changed the
    /// slot meanwhile, or here.
    #[allow(clippy::too_many_arguments)]
    fn recompress_object(
        &self,
        storage: &Storage,
        index: usize,
        page: &BouncePage,
        budget: &mut u64,
        threshold: usize,
        targets: &Targets,
        old_size: usize,
        current: Priority,
    ) -> Result {
        let pool = storage.pages.pool();
        let old_class = pool.class_index(old_size);
        let candidates = match targets {
            Targets::Range(range) => range.clone(),
            Targets::One(priority) => priority.index()..priority.index() + 1,
        };
        let mut tried = 0;
        // Whether the last attempt gave no smaller class, and whether it was no smaller than
        // the threshold.
        let mut last = None;
        for priority in Priority::all().filter(|p| candidates.contains(&p.index())) {
            let Some(codec) = storage.comp(priority) else {
                continue;
            };
            if priority <= current {
                continue;
            }
            tried += 1;
            let mut stream = codec.streams().get();
            let compressed = stream.compress(page.bytes());
            if let Targets::One(_) = targets {
                // 7.3 counts the slot before it looks at the result.
                *budget = budget.saturating_sub(1);
            }
            let object = compressed?;
            let no_smaller_class = pool.class_index(object.len()) >= old_class;
            let above_threshold = threshold != 0 && object.len() >= threshold;
            last = Some((no_smaller_class, above_threshold));
            if no_smaller_class || above_threshold {
                continue;
            }
            if let Targets::Range(_) = targets {
                *budget = budget.saturating_sub(1);
            }
            // C 6.12 allocates without direct reclaim, 7.3 with it; either way quietly, and a
            // failure keeps the old object and ends the recompression.
            let handle = pool.alloc(object.len(), Kernel::GFP_RECOMPRESS)?;
            handle.write(object);
            drop(stream);
            return self.store_recompressed(storage, index, handle, priority);
        }
        // Nothing kept. Not counted if none was tried.
        let incompressible = last.is_some_and(|(no_smaller_class, above_threshold)| {
            if let Targets::Range(_) = targets {
                *budget = budget.saturating_sub(1);
            }
            targets.incompressible(storage, tried, no_smaller_class, above_threshold)
        });
        keep_old_object(storage, index, incompressible);
        Ok(())
    }

    /// Stores `handle`, the object page `index` was recompressed to by the algorithm of
    /// `priority`, if the slot is still marked for its recompression (else the slot changed or
    /// was freed meanwhile, which took the marks away, and the new object goes).
    fn store_recompressed(
        &self,
        storage: &Storage,
        index: usize,
        handle: ZsHandle<'_>,
        priority: Priority,
    ) -> Result {
        let Some(mut slot) = storage.pages.lock(index) else {
            return Ok(());
        };
        if !slot.has_mark(Mark::Recompress) {
            // The new object is freed after the unlock.
            drop(slot);
            return Ok(());
        }
        let size = handle.size();
        // A read while the slot was unlocked: in C it waited for the slot and came after
        // the recompression, so its access time stays. (An `idle` write waits for the
        // slot's recompression, `Zram::mark_idle`.)
        let read_at = (!slot.has_mark(Mark::Untouched)).then(|| slot.access_time());
        // Also takes the marks (idle, recompression) and the access time away, as C's
        // `zram_free_page()` before it stores the new object.
        let old = slot
            .store_object(handle, false, priority)
            .map_err(|_| EIO)?;
        if let Some(seconds) = read_at {
            slot.accessed(seconds);
        }
        self.stats.stored_object(size, false);
        drop(slot);
        storage.removed(&self.stats, old);
        Ok(())
    }
}

impl Targets {
    /// Whether a page none of whose recompressions was kept is incompressible, the last
    /// attempt having given `no_smaller_class` and been `above_threshold`, after `tried`
    /// attempts: when every recompression algorithm was tried in this write and the last gave
    /// no smaller class (6.12), or when the last configured one gave no smaller class or too
    /// many bytes (7.3).
    fn incompressible(
        &self,
        storage: &Storage,
        tried: usize,
        no_smaller_class: bool,
        above_threshold: bool,
    ) -> bool {
        match self {
            Targets::Range(_) => no_smaller_class && tried == storage.recompressors.count(),
            Targets::One(priority) => {
                (no_smaller_class || above_threshold) && storage.recompressors.is_last(*priority)
            }
        }
    }
}

/// Which slots a recompression takes.
struct Wanted {
    /// Selected and marked beforehand (7.3): those still marked.
    selected: bool,
    /// Else (6.12) by `type=`.
    mode: Mode,
    /// Objects of at least this many bytes (0: any).
    threshold: usize,
}

impl Wanted {
    /// The locked slot's content, object size and priority if it is to be recompressed.
    fn candidate(&self, slot: &SlotGuard<'_>) -> Option<(SlotContent, usize, Priority)> {
        let content = slot.content();
        let SlotContent::Stored {
            size,
            huge,
            priority,
            ..
        } = content
        else {
            return None;
        };
        let qualifies = if self.selected {
            // Unchanged and not accessed since it was selected if still marked.
            slot.has_mark(Mark::Writeback)
        } else {
            // Not being written back (C 6.12's `ZRAM_UNDER_WB`), not incompressible.
            !slot.has_mark(Mark::Writeback)
                && !slot.is_incompressible()
                && (!self.mode.idle || slot.is_idle())
                && (!self.mode.huge || huge)
        };
        (qualifies && size >= self.threshold).then_some((content, size, priority))
    }
}

/// Reads page `index` into `page` if `wanted` takes its slot, and marks the slot for
/// recompression; returns the object's size and priority, or `None` for a slot passed over.
/// First a look without a decompression context, as C takes one slot lock for each slot it
/// skips; a page stored whole is read under that lock, it needs no context. A compressed object
/// is locked again with a context of its algorithm ([`lock_with_reader_of`]), and looked at
/// again.
fn read_for_recompression(
    storage: &Storage,
    index: usize,
    page: &mut BouncePage,
    wanted: &Wanted,
    stats: &Stats,
) -> Result<Option<(usize, Priority)>> {
    let priority = {
        let Some(mut slot) = storage.pages.lock(index) else {
            return Ok(None);
        };
        let Some((content, size, priority)) = wanted.candidate(&slot) else {
            return Ok(None);
        };
        if let Some(plain) = Plain::of(content) {
            read_plain(&slot, plain, index, page.bytes_mut())?;
            return Ok(Some(taken(&mut slot, size, priority)));
        }
        priority
    };
    let read = lock_with_reader_of(storage, index, priority, |slot, reader| -> Result<_> {
        let Some((content, size, priority)) = wanted.candidate(slot) else {
            return Ok(None);
        };
        read_locked(slot, content, index, page.bytes_mut(), reader, stats, false)?;
        Ok(Some(taken(slot, size, priority)))
    });
    // The context goes back after the unlock.
    read.map_or(Ok(None), |(_reader, read)| read)
}

/// The page has been read from the locked slot: from now the page is not idle (as in C), and
/// the slot is marked for recompression. Passes on the object's `size` and `priority`.
fn taken(slot: &mut SlotGuard<'_>, size: usize, priority: Priority) -> (usize, Priority) {
    slot.unmark_idle();
    slot.set_mark(Mark::Recompress);
    // Taken away by an access while the slot is unlocked (`SlotGuard::accessed`).
    slot.set_mark(Mark::Untouched);
    (size, priority)
}

/// Ends the recompression of page `index` that kept its old object: the slot, unless it changed
/// meanwhile, is marked `incompressible` if so found, and loses the recompression's marks.
fn keep_old_object(storage: &Storage, index: usize, incompressible: bool) {
    if let Some(mut slot) = storage.pages.lock(index) {
        if incompressible && slot.has_mark(Mark::Recompress) {
            slot.mark_incompressible();
        }
        unmark_recompressed(&mut slot);
    }
}

/// Takes a recompression's marks away from its slot.
fn unmark_recompressed(slot: &mut SlotGuard<'_>) {
    slot.clear_mark(Mark::Recompress);
    slot.clear_mark(Mark::Untouched);
}

/// `EINVAL` for a threshold at or above zsmalloc's huge class (C's check, made before any
/// other; before initialisation the request fails with `EINVAL` anyway).
fn check_threshold(request: &Recompress<'_>, huge_class_size: Option<usize>) -> Result {
    match huge_class_size {
        Some(size) if request.threshold as usize >= size => Err(EINVAL),
        _ => Ok(()),
    }
}
