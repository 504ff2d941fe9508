// SPDX-License-Identifier: GPL-2.0
//! Post-processing, the work writeback and recompression share: the device's turn (at most one
//! runs; how a second one and the attribute writes C 7.3 queues behind it meet it is the
//! kernel's ABI, [`Turns`]), its end ([`release`], in the order a waiting `reset` needs), and
//! C 7.3's selection of slots, marked and ordered largest first ([`select_slots`]).

use super::backing::Backing;
use super::{Config, Storage};
use crate::abi::{Abi, Turns};
use crate::kapi::rwsem::ReadGuard;
use crate::slot::SlotContent;
use crate::table::{Mark, SlotGuard, PAGE_SIZE};
use crate::Kernel;
use core::sync::atomic::{AtomicBool, Ordering::Relaxed};
use kernel::alloc::flags::{GFP_KERNEL, GFP_NOWAIT};
use kernel::alloc::{KVec, VVec};
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::lock::mutex::MutexBackend;
use kernel::sync::lock::Guard;
use kernel::sync::{Arc, Mutex};

/// Whose turn it is to post-process a device: writeback, recompression, and (with
/// [`Turns::Queue`]) the attribute writes that wait for them.
#[pin_data]
pub(super) struct PostProcessTurn {
    /// [`Turns::RefuseSecond`]: a post-processing, writeback or recompression, runs (C 6.12's
    /// `pp_in_progress`).
    busy: AtomicBool,
    /// [`Turns::Queue`]: held by the post-processing in progress and by `idle`, `compact` and
    /// `mem_used_max` (C 7.3 runs them under its device lock); taken with `init_lock` held for
    /// reading.
    #[pin]
    turn: Mutex<()>,
}

impl PostProcessTurn {
    /// Nobody's turn.
    pub(super) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            busy: AtomicBool::new(false),
            turn <- new_mutex!((), "Zram::post_processing"),
        })
    }

    /// Starts a post-processing (with `init_lock` held for reading): `EAGAIN` while one runs
    /// ([`Turns::RefuseSecond`]), or once the one running has ended ([`Turns::Queue`]).
    pub(super) fn start(&self) -> Result<PostProcessing<'_>> {
        match Kernel::TURNS {
            Turns::Queue => Ok(PostProcessing {
                busy: None,
                _turn: Some(self.turn.lock()),
            }),
            Turns::RefuseSecond if self.busy.swap(true, Relaxed) => Err(EAGAIN),
            Turns::RefuseSecond => Ok(PostProcessing {
                busy: Some(&self.busy),
                _turn: None,
            }),
        }
    }

    /// What the attribute writes that wait for a post-processing (`idle`, `compact`,
    /// `mem_used_max`) hold, with `init_lock` held for reading: with [`Turns::Queue`] the
    /// post-processing turn, so that each waits for a running one and none starts meanwhile;
    /// else nothing.
    pub(super) fn wait(&self) -> Option<Guard<'_, (), MutexBackend>> {
        (Kernel::TURNS == Turns::Queue).then(|| self.turn.lock())
    }
}

/// The post-processing, writeback or recompression, in progress on a device: at most one.
/// Taken and held with `init_lock` held for reading (which a `reset` waits for).
pub(super) struct PostProcessing<'a> {
    /// [`Turns::RefuseSecond`]: C 6.12's `pp_in_progress` flag, cleared on drop.
    busy: Option<&'a AtomicBool>,
    /// [`Turns::Queue`]: the device's post-processing turn, given back on drop.
    _turn: Option<Guard<'a, (), MutexBackend>>,
}

impl Drop for PostProcessing<'_> {
    fn drop(&mut self) {
        if let Some(busy) = self.busy {
            busy.store(false, Relaxed);
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

/// C 7.3's selection of slots for post-processing: every slot in each range whose predicate
/// wants it (and that holds an object not marked already), marked with `mark`; returned as
/// indexes in the order C processes them. C files each slot at the head of the list of its
/// size's bucket (64-byte ranges) and takes the highest non-empty bucket's head first; the
/// lists here are the same, as links between entries. A compression unit's page (which only
/// writeback selects) is filed by its share of the unit's object, its size over the unit's
/// pages. Running out of memory stops the selection quietly, as in C, and what was selected is
/// processed.
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
        let mut next = range.start;
        // Only a slot holding an object can be selected: the others are passed over with a
        // look at their flags.
        while let Some(index) = storage.pages.next_object_hint(next..range.end) {
            // No overflow: below `range.end`.
            next = index + 1;
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
            // A unit's page by its share of the unit's object.
            let size = match content {
                SlotContent::Stored { size, .. } => size,
                SlotContent::InUnit(_) => match slot.unit_page() {
                    Some((_, object)) => object.len.div_ceil(storage.unit.pages()),
                    None => continue,
                },
                _ => continue,
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
