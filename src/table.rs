// SPDX-License-Identifier: GPL-2.0
//! The page store of one initialised device: the slot table (one [`Slot`] per kernel page of
//! the disk, whatever the page size) together with the zsmalloc pool its handles belong to.
//!
//! Each slot has its own lock, a bit in its flags word taken with an atomic `fetch_or`. A thread
//! that finds it taken sleeps until it is free (`kapi::bit_wait`, as C zram 7.3's slot lock
//! sleeps on its lock bit), having set the word's waiters bit; a holder may be preempted and,
//! on PREEMPT_RT, sleep in zsmalloc's locks. The lock may also be tried, which never waits,
//! from atomic context (`swap_slot_free_notify`). A [`SlotGuard`] is the only way to read or
//! change a slot. It keeps the flags word in a register while it holds the lock and writes it
//! back on drop with one atomic exchange, which also unlocks and tells whether to wake
//! sleepers.
//!
//! Lock order (see also `zram.rs`): device init lock → compression stream → slot lock →
//! zsmalloc's internal locks. A slot lock's holder never waits for a stream or another slot
//! lock, and allocates no pool object (those are allocated before the lock is taken). The
//! slot locks of a store share one lockdep map ([`LockdepMap`]) of a mutex's wait type, so the
//! debug kernel checks all of this.

use crate::abi::Abi;
use crate::idle::Cutoff;
use crate::kapi::lockdep::{LockClass, LockdepMap};
use crate::kapi::zspool::{ZsHandle, ZsPool};
use crate::kapi::{bit_wait, c_zram, cpu, mem};
use crate::slot::{self, Priority, SlotContent};
use crate::Kernel;
use core::cell::UnsafeCell;
use core::ops::Range;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::alloc::flags::{__GFP_NOWARN, GFP_KERNEL};
use kernel::alloc::VVec;
use kernel::prelude::*;

/// The slot layout for the kernel's page size and C zram's flag order.
pub(crate) type Layout = slot::Layout<{ kernel::page::PAGE_SHIFT as u32 }, { Kernel::HUGE_FLAG }>;
/// The kernel's page size: one slot's data.
pub(crate) const PAGE_SIZE: usize = Layout::PAGE_SIZE;
const _: () = assert!(PAGE_SIZE == kernel::page::PAGE_SIZE);

/// Whether the slot layout is C zram's, where the kernel tree has its header (see
/// `c_layout.c`). Checked at build time in [`PageStore::new`].
const fn layout_is_c_zrams() -> bool {
    match c_zram::FLAGS {
        None => true,
        Some(c) => {
            Layout::FLAG_SHIFT as i64 == c.flag_shift
                && Layout::SAME as i64 == 1 << c.same
                && Layout::HUGE as i64 == 1 << c.huge
                && Layout::IDLE as i64 == 1 << c.idle
                && Layout::WB as i64 == 1 << c.wb
                && Layout::IN_WRITEBACK as i64 == 1 << c.pp_mark
                && Layout::INCOMPRESSIBLE as i64 == 1 << c.incompressible
                && Layout::PRIORITY_SHIFT as i64 == c.priority_bit1
                && c.count <= 30
        }
    }
}

/// One page's entry: a value word (a union decided by the flags, see `slot.rs`), a flags word
/// that also carries the lock bit, and the page's last access time (whole seconds of boot time,
/// 0 for an empty slot), which fills what would be padding: 16 bytes on 64-bit, like C zram's
/// entry without access times.
///
/// # Invariants
///
/// `value` and `access` are only read or written by the holder of the lock bit in `flags`.
/// The bits of `flags` but the lock and waiters bits are changed only under the lock too, and
/// read without it only as a hint ([`Slot::held_object`]) or by a thread waiting for
/// a mark to go ([`PageStore::wait_while_marked`]); the waiters bit is set by threads waiting
/// for the lock or a mark (also while the slot is unlocked) and cleared by the next unlock. A `Stored` content's handle is a live
/// object of the [`PageStore`]'s pool, owned by the slot.
pub(crate) struct Slot {
    value: UnsafeCell<usize>,
    flags: AtomicU32,
    access: UnsafeCell<u32>,
}

impl Slot {
    /// Whether the slot held an object when its flags word was read, without its lock (the
    /// hints of [`PageStore::next_object_hint`] and [`PageStore::may_hold_object`]).
    #[inline(always)]
    fn held_object(&self) -> bool {
        let flags = self.flags.load(Ordering::Relaxed);
        // The value word is not read: which content it is shows in the flags alone.
        matches!(Layout::decode(0, flags), SlotContent::Stored { .. })
    }
}

// The access time costs no memory on 64-bit.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(core::mem::size_of::<Slot>() == 16);

/// The slot table and the pool that holds the slots' objects.
///
/// # Invariants
///
/// Every slot decoding as `Stored` holds a handle allocated from `pool` and owned by that slot.
pub(crate) struct PageStore {
    slots: VVec<Slot>,
    pool: ZsPool,
    /// What lockdep knows of the slot locks.
    lockdep: LockdepMap,
}

// SAFETY: a slot's `UnsafeCell` is only accessed under its lock bit (type invariant of `Slot`),
// which serialises access across threads; the pool is `Sync`.
unsafe impl Sync for PageStore {}
// SAFETY: the store owns its memory; nothing in it is tied to a thread.
unsafe impl Send for PageStore {}

/// Exclusive access to one slot, released on drop.
///
/// # Invariants
///
/// The guard's thread holds `slot`'s lock bit (`slot` is one of `store`'s slots) and the lock in
/// lockdep's view of `store.lockdep`. `flags` is the slot's flags word without the lock and
/// waiters bits as it will be stored on drop: only the lock holder changes the word's other
/// bits (and reads them, but for the hint of [`Slot::held_object`], which sees the word
/// as it was before the lock); another thread's `fetch_or` of the lock bit leaves a held word as
/// it is, and a sleeper's sets only the waiters bit, which the drop's exchange reads and clears.
pub(crate) struct SlotGuard<'a> {
    slot: &'a Slot,
    store: &'a PageStore,
    flags: u32,
}

impl PageStore {
    /// A store of `pages` empty slots with a fresh pool called `name`.
    pub(crate) fn new(pages: usize, pool: ZsPool) -> Result<Self> {
        // The layout's build-time checks, in the function every table comes from (rustc 1.85
        // counts constants used only by `const _` items as unused).
        const {
            let () = Layout::VALID;
            assert!(layout_is_c_zrams(), "the slot layout differs from C zram's");
        }
        if pages == 0 {
            return Err(ENOMEM);
        }
        // SAFETY: an all-zero `Slot` is a valid empty, unlocked slot.
        let slots = unsafe { mem::zeroed_vvec::<Slot>(pages, GFP_KERNEL | __GFP_NOWARN) }?;
        // INVARIANT: no slot is `Stored` yet.
        Ok(Self {
            slots,
            pool,
            lockdep: LockdepMap::new(LockClass::Slot)?,
        })
    }

    /// Number of slots (pages of the disk).
    pub(crate) fn pages(&self) -> usize {
        self.slots.len()
    }

    /// The pool, for allocating objects before locking a slot, and for its figures.
    pub(crate) fn pool(&self) -> &ZsPool {
        &self.pool
    }

    /// The first slot of `range` (cut at the last slot) that held an object when its flags word
    /// was read, without taking its lock: for walks over every slot, which lock and look again
    /// only at the slots found (a slot written a moment after the read is missed, as it would
    /// be a moment after the unlock of a locked look). One load and test per slot passed over.
    pub(crate) fn next_object_hint(&self, range: Range<usize>) -> Option<usize> {
        let start = range.start;
        let slots = self.slots.get(start..range.end.min(self.slots.len()))?;
        let found = slots.iter().position(Slot::held_object)?;
        // No overflow: below `range.end`.
        Some(start + found)
    }

    /// Whether slot `index` held an object when its flags word was read, without taking its
    /// lock: a hint, as [`Self::next_object_hint`]'s, for a reader choosing how to read it.
    pub(crate) fn may_hold_object(&self, index: usize) -> bool {
        self.slots.get(index).is_some_and(Slot::held_object)
    }

    /// Locks slot `index`, sleeping while another thread holds it.
    pub(crate) fn lock(&self, index: usize) -> Option<SlotGuard<'_>> {
        let slot = self.slots.get(index)?;
        cpu::might_sleep();
        // As `mutex_lock()`: lockdep hears of the lock before the wait for it.
        self.lockdep.acquire(false);
        loop {
            if let Some(guard) = self.try_lock_slot(slot) {
                return Some(guard);
            }
            bit_wait::wait_while_set(&slot.flags, slot::LOCK, slot::WAITERS);
        }
    }

    /// Sleeps, without the slot's lock, while slot `index` carries `mark` (a [`Mark::Recompress`]
    /// the recompression takes away under the lock: its unlock wakes this sleeper, which set
    /// the word's waiters bit). Returns at once for a slot without it.
    pub(crate) fn wait_while_marked(&self, index: usize, mark: Mark) {
        if let Some(slot) = self.slots.get(index) {
            cpu::might_sleep();
            bit_wait::wait_while_set(&slot.flags, mark.bit(), slot::WAITERS);
        }
    }

    /// Locks slot `index` if nobody holds it; never waits (callable in atomic context).
    pub(crate) fn try_lock(&self, index: usize) -> Option<SlotGuard<'_>> {
        let guard = self.try_lock_slot(self.slots.get(index)?)?;
        self.lockdep.acquire(true);
        Some(guard)
    }

    #[inline(always)]
    fn try_lock_slot<'a>(&'a self, slot: &'a Slot) -> Option<SlotGuard<'a>> {
        // x86_64: a `fetch_or` of which only the bit is looked at is one `lock bts`, where one
        // whose old word is kept is a compare-and-exchange loop; the word is then read again,
        // which shows it as it was but for the lock and waiters bits (only the lock's holder
        // changes the others). Elsewhere the old word is kept.
        #[cfg(target_arch = "x86_64")]
        let flags = {
            if slot.flags.fetch_or(slot::LOCK, Ordering::Acquire) & slot::LOCK != 0 {
                return None;
            }
            slot.flags.load(Ordering::Relaxed) & !slot::LOCK
        };
        #[cfg(not(target_arch = "x86_64"))]
        let flags = slot.flags.fetch_or(slot::LOCK, Ordering::Acquire);
        // INVARIANT: made only when this thread set the lock bit; `flags` is the word as it
        // was, unlocked, without the waiters bit; the callers tell lockdep.
        (flags & slot::LOCK == 0).then(|| SlotGuard {
            slot,
            store: self,
            flags: flags & !slot::WAITERS,
        })
    }
}

impl Drop for PageStore {
    fn drop(&mut self) {
        for index in 0..self.slots.len() {
            if let Some(mut guard) = self.lock(index) {
                guard.clear();
            }
        }
    }
}

/// The marks of a post-processing operation on the slots it works on. Any change of a slot's
/// content takes either away, so the operation finds out whether it may still replace it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// A writeback (C 6.12's `ZRAM_UNDER_WB`, 7.3's `ZRAM_PP_SLOT`): an access takes it away
    /// too, as the page is in use.
    Writeback,
    /// A recompression: reads leave it (C's reads wait for the recompression of their page).
    Recompress,
    /// Set with [`Mark::Recompress`], to learn whether the page was accessed meanwhile: an
    /// access takes it away too; `idle` leaves it.
    Untouched,
}

impl Mark {
    fn bit(self) -> u32 {
        match self {
            Self::Writeback => Layout::IN_WRITEBACK,
            Self::Recompress => slot::RECOMPRESSING,
            Self::Untouched => slot::UNTOUCHED,
        }
    }
}

/// What a written-back slot remembers of the object it was (7.3; see
/// [`SlotGuard::store_written_back`]).
#[derive(Clone, Copy)]
pub(crate) struct WrittenBackObject {
    /// The block of the backing device.
    pub(crate) block: usize,
    /// The object's size (the page size for a huge page).
    pub(crate) size: usize,
    /// The page was stored uncompressed.
    pub(crate) huge: bool,
}

impl SlotGuard<'_> {
    fn words(&self) -> (usize, u32) {
        // SAFETY: the lock is held (type invariant), so nobody else accesses `value`.
        let value = unsafe { *self.slot.value.get() };
        (value, self.flags)
    }

    /// What the slot holds.
    pub(crate) fn content(&self) -> SlotContent {
        let (value, flags) = self.words();
        Layout::decode(value, flags)
    }

    fn set_words(&mut self, value: usize, flags: u32) {
        // SAFETY: the lock is held (type invariant).
        unsafe { *self.slot.value.get() = value };
        // INVARIANT: nobody changes the slot's non-lock bits without the lock, nor reads them
        // but as a hint; the drop stores the new word.
        self.flags = flags;
    }

    /// Frees what the slot holds and leaves it empty, with no access time (as C's
    /// `zram_free_page()`); returns what it held.
    pub(crate) fn clear(&mut self) -> SlotContent {
        let old = self.content();
        if let SlotContent::Stored { handle, size, .. } = old {
            // SAFETY: a `Stored` slot owns a live handle of this store's pool (invariants of
            // `Slot` and `PageStore`); the slot is emptied right below, so it is not used again.
            drop(unsafe { ZsHandle::from_raw(&self.store.pool, handle, size) });
        }
        self.set_words(0, 0);
        self.set_access(0);
        old
    }

    /// The page's last access time, in whole seconds of boot time (0: none since it was freed).
    pub(crate) fn access_time(&self) -> u32 {
        // SAFETY: the lock is held (type invariant).
        unsafe { *self.slot.access.get() }
    }

    fn set_access(&mut self, seconds: u32) {
        // SAFETY: the lock is held (type invariant).
        unsafe { *self.slot.access.get() = seconds };
    }

    /// Frees what the slot held and stores the object `handle` (of this store's pool),
    /// compressed by the algorithm of `priority`, in it; returns the old content. A handle of
    /// another pool is given back untouched.
    #[inline(always)]
    pub(crate) fn store_object<'p>(
        &mut self,
        handle: ZsHandle<'p>,
        huge: bool,
        priority: Priority,
    ) -> core::result::Result<SlotContent, ZsHandle<'p>> {
        if !handle.belongs_to(&self.store.pool) {
            return Err(handle);
        }
        // A live pool object: a non-zero handle of 1..=PAGE_SIZE bytes, which the checked
        // encoding (run where debug assertions are on) accepts with the same words.
        let (value, flags) = Layout::encode_object(handle.raw(), handle.size(), huge, priority);
        debug_assert!(
            Layout::encode(SlotContent::Stored {
                handle: handle.raw(),
                size: handle.size(),
                huge,
                priority,
            }) == Ok((value, flags))
        );
        let old = self.clear();
        let _ = handle.into_raw();
        // INVARIANT: the slot now owns a live handle of this store's pool (checked above).
        self.set_words(value, flags);
        Ok(old)
    }

    /// Frees what the slot held and stores a same-filled page's word; returns the old content.
    pub(crate) fn store_same(&mut self, word: usize) -> SlotContent {
        let old = self.clear();
        self.set_words(word, Layout::SAME);
        old
    }

    /// Marks the slot idle, or not, as an `idle` write with `cutoff` does
    /// ([`slot::Layout::mark_idle`]).
    pub(crate) fn mark_idle(&mut self, cutoff: Cutoff) {
        let (value, flags) = self.words();
        let idle = cutoff.is_idle(self.access_time());
        self.set_words(value, Layout::mark_idle(value, flags, idle));
    }

    /// Records an access at `now` (whole seconds of boot time): the slot is no longer idle (as
    /// C's `zram_accessed()`), and a writeback of it in flight gives up (the page is in use).
    #[inline(always)]
    pub(crate) fn accessed(&mut self, now: u32) {
        self.flags &= !(Layout::IDLE | Layout::IN_WRITEBACK | slot::UNTOUCHED);
        self.set_access(now);
    }

    /// Whether `idle` marked the slot and nothing accessed it since.
    pub(crate) fn is_idle(&self) -> bool {
        self.flags & Layout::IDLE != 0
    }

    /// Takes the idle mark away.
    pub(crate) fn unmark_idle(&mut self) {
        self.flags &= !Layout::IDLE;
    }

    /// Sets `mark` on the slot ([`Mark`] says what takes it away).
    pub(crate) fn set_mark(&mut self, mark: Mark) {
        self.flags |= mark.bit();
    }

    /// Whether the slot still has `mark`.
    pub(crate) fn has_mark(&self, mark: Mark) -> bool {
        self.flags & mark.bit() != 0
    }

    /// Takes `mark` away.
    pub(crate) fn clear_mark(&mut self, mark: Mark) {
        self.flags &= !mark.bit();
    }

    /// Frees what the slot held and records it as written back to `block` of the backing
    /// device; returns the old content. C 7.3 keeps the access time, the object's size, a
    /// huge page's `ZRAM_HUGE`, the algorithm's priority and the incompressible mark on its
    /// written-back slot (none counted in `mm_stat`; a compressed writeback decompresses with
    /// the size and the priority's algorithm); 6.12 clears them all.
    pub(crate) fn store_written_back(&mut self, block: usize) -> SlotContent {
        let access = self.access_time();
        let kept_marks = self.flags & (Layout::INCOMPRESSIBLE | Layout::PRIORITY);
        let old = self.clear();
        let flags = match old {
            SlotContent::Stored { size, huge, .. } if Kernel::WRITTEN_BACK_KEEPS_OBJECT => {
                let huge = if huge { Layout::HUGE } else { 0 };
                // `size` came out of the flags word's size field, so it fits there again.
                Layout::WB | huge | (size as u32 & Layout::SIZE_MASK) | kept_marks
            }
            _ => Layout::WB,
        };
        self.set_words(block, flags);
        if Kernel::WRITTEN_BACK_KEEPS_OBJECT {
            self.set_access(access);
        }
        old
    }

    /// For a written-back page: its block, and the size of the object it was stored as and
    /// whether it was huge (7.3; see [`Self::store_written_back`]; [`Self::priority`] names
    /// its algorithm).
    pub(crate) fn written_back_object(&self) -> Option<WrittenBackObject> {
        let (value, flags) = self.words();
        match Layout::decode(value, flags) {
            SlotContent::WrittenBack(block) => Some(WrittenBackObject {
                block,
                size: (flags & Layout::SIZE_MASK) as usize,
                huge: flags & Layout::HUGE != 0,
            }),
            _ => None,
        }
    }

    /// Whether no recompression algorithm could store the object smaller
    /// (`ZRAM_INCOMPRESSIBLE`).
    pub(crate) fn is_incompressible(&self) -> bool {
        self.flags & Layout::INCOMPRESSIBLE != 0
    }

    /// Marks the object as one that no recompression algorithm stores smaller.
    pub(crate) fn mark_incompressible(&mut self) {
        self.flags |= Layout::INCOMPRESSIBLE;
    }

    /// The priority of the algorithm of the slot's object, or of the object it was before
    /// being written back (7.3); 0 for other contents.
    pub(crate) fn priority(&self) -> Priority {
        Layout::priority(self.flags)
    }

    /// Whether the slot carries C's `ZRAM_HUGE`: a page stored uncompressed, or on 7.3 a
    /// written-back page that was one (see [`Self::store_written_back`]).
    pub(crate) fn huge_mark(&self) -> bool {
        self.words().1 & Layout::HUGE != 0
    }

    /// Calls `f` with the bytes of the stored object, or returns `None` if the slot holds no
    /// object (or `scratch` is too small for it: see [`ZsPool::read_raw`]). `f` runs inside
    /// zsmalloc's mapping of the object (6.12's disables preemption but on PREEMPT_RT) and must
    /// not sleep.
    #[inline(always)]
    pub(crate) fn read_object<R>(
        &self,
        scratch: &mut [u8],
        f: impl FnOnce(&[u8], bool) -> R,
    ) -> Option<R> {
        match self.content() {
            SlotContent::Stored {
                handle, size, huge, ..
            } => {
                let pool = &self.store.pool;
                // SAFETY: the slot owns this live object of `pool` and cannot be changed or
                // freed while this guard (borrowed for the whole call) holds the lock.
                unsafe { pool.read_raw(handle, size, scratch, |bytes| f(bytes, huge)) }
            }
            _ => None,
        }
    }
}

impl Drop for SlotGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.store.lockdep.release();
        // Stores the word the guard kept, without the lock and waiters bits: nobody else
        // changes it while it is locked but to set the waiters bit (type invariant), which the
        // exchange reads (acquiring, so that the sleeper's queueing is seen by the wake).
        let old = self.slot.flags.swap(self.flags, Ordering::AcqRel);
        if old & slot::WAITERS != 0 {
            bit_wait::wake_waiters(&self.slot.flags);
        }
    }
}
