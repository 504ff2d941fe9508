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
//! A page of a compression unit (`unit.rs`) holds the address of its unit's [`UnitRecord`],
//! which owns the unit's pieces in the pool and counts, in an atomic mask, the pages that still
//! refer to it: a page's bit goes under that page's slot lock, and whoever takes the last one
//! frees the record. No slot lock is held while another is taken, for units too.
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
use crate::unit::{Members, Pieces, UnitSize, MAX_UNIT_PAGES};
use crate::Kernel;
use core::cell::UnsafeCell;
use core::ops::Range;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};
use kernel::alloc::flags::{__GFP_NOWARN, GFP_KERNEL, GFP_NOWAIT};
use kernel::alloc::{KBox, VVec};
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
        matches!(
            Layout::decode(0, flags),
            SlotContent::Stored { .. } | SlotContent::InUnit(_)
        )
    }

    /// Whether the slot held a unit's page when its flags word was read, without its lock (the
    /// hint of [`PageStore::may_be_in_unit`]).
    #[inline(always)]
    fn held_unit_page(&self) -> bool {
        let flags = self.flags.load(Ordering::Relaxed);
        matches!(Layout::decode(0, flags), SlotContent::InUnit(_))
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
/// Every slot decoding as `InUnit` holds the address of a live [`UnitRecord`] of this store
/// whose member mask has the bit of the slot's place in its unit set.
pub(crate) struct PageStore {
    slots: VVec<Slot>,
    pool: ZsPool,
    /// What lockdep knows of the slot locks.
    lockdep: LockdepMap,
    /// The serial number of the next unit record.
    next_serial: AtomicU64,
}

/// A compression unit's object: the pieces its compressed bytes are stored in
/// ([`Pieces`] of at most a page, zsmalloc's largest object) and which of the unit's pages
/// still refer to it.
///
/// # Invariants
///
/// The first `Pieces::new(len, PAGE_SIZE).count()` entries of `pieces` are live handles of the
/// owning store's pool, owned by the record, each of its piece's size. A record reached
/// through a slot, a [`UnitShares`] or an [`UnitAllocation`] is alive; it is freed, with its
/// pieces, by the thread that clears the last bit of `members` (each bit is cleared once, by
/// the holder of the share it stands for: the lock holder of the page's slot, or the
/// [`UnitShares`] of a share never stored).
pub(crate) struct UnitRecord {
    members: AtomicU16,
    /// The unit's first page.
    first: usize,
    /// log2 of the unit's pages.
    shift: u32,
    len: usize,
    serial: u64,
    pieces: [usize; MAX_UNIT_PAGES],
}

impl UnitRecord {
    /// The place in the unit of page `index`, if the page is one of the unit's.
    fn place(&self, index: usize) -> Option<usize> {
        (index >> self.shift == self.first >> self.shift).then(|| index - self.first)
    }
}

/// A unit's object being made: its record, owning the pieces added so far, freed with them
/// unless [`Self::publish`]ed.
pub(crate) struct UnitAllocation<'a> {
    /// `None` once published.
    record: Option<KBox<UnitRecord>>,
    added: usize,
    store: &'a PageStore,
}

/// The shares of a published unit record not yet stored in their slots (one per page of its
/// member mask): stored one by one by [`SlotGuard::store_unit`], released on drop.
///
/// # Invariants
///
/// `record` is a live record of `store`; the bits of `unplaced` are set in its member mask and
/// owned by this value.
pub(crate) struct UnitShares<'a> {
    record: NonNull<UnitRecord>,
    unplaced: Members,
    store: &'a PageStore,
    /// The record's `len`, kept here: the record may be freed once every share is stored.
    len: usize,
}

/// What reading a unit's page found of its record: its compressed length and serial number
/// (no other record of the store had it). Units are compressed by the primary algorithm.
#[derive(Clone, Copy)]
pub(crate) struct UnitObject {
    pub(crate) len: usize,
    pub(crate) serial: u64,
}

/// What a slot held before a change, for the accounting ([`crate::zram::Storage`]'s
/// `removed`): its content, but for a unit's page, whose record may be gone by then,
/// `InUnit(freed)`: the bytes of the unit's object its release freed, or 0 while other pages
/// refer to it. (The same words as a content, so that the paths without units cost what they
/// did.)
#[derive(Clone, Copy)]
pub(crate) struct Removed(pub(crate) SlotContent);

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
        // INVARIANT: no slot is `Stored` or `InUnit` yet.
        Ok(Self {
            slots,
            pool,
            lockdep: LockdepMap::new(LockClass::Slot)?,
            next_serial: AtomicU64::new(1),
        })
    }

    /// A record for the object of the unit of `size` whose first page is `first`, of `len`
    /// compressed bytes (at most `MAX_UNIT_PAGES` pieces) compressed by the primary
    /// algorithm, to which its pieces are then added.
    pub(crate) fn new_unit(
        &self,
        size: UnitSize,
        first: usize,
        len: usize,
    ) -> Result<UnitAllocation<'_>> {
        let aligned = first & (size.pages() - 1) == 0;
        let inside = first
            .checked_add(size.pages())
            .is_some_and(|end| end <= self.slots.len());
        if len == 0 || Pieces::new(len, PAGE_SIZE).count() > MAX_UNIT_PAGES || !aligned || !inside {
            return Err(EINVAL);
        }
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        let record = KBox::new(
            UnitRecord {
                members: AtomicU16::new(0),
                first,
                shift: size.shift(),
                len,
                serial,
                pieces: [0; MAX_UNIT_PAGES],
            },
            // On the write path, where the unit is stored page by page if this fails.
            GFP_NOWAIT | __GFP_NOWARN,
        )?;
        Ok(UnitAllocation {
            record: Some(record),
            added: 0,
            store: self,
        })
    }

    /// Takes the bits of `bits` away from `record`'s member mask, owned by the caller, and
    /// frees the record and its pieces if those were the last; returns the bytes freed (0 if
    /// not).
    ///
    /// # Safety
    ///
    /// `record` is a live record of this store, and the caller owns the shares of `bits` (set
    /// in its mask), which it gives up.
    unsafe fn release(&self, record: NonNull<UnitRecord>, bits: Members) -> usize {
        // SAFETY: live while the caller's shares are (the caller's guarantee).
        let members = unsafe { &record.as_ref().members };
        // Acquire: every earlier holder of a share is done with the record before this one
        // frees it; release: so is this thread.
        let old = members.fetch_and(!bits.bits(), Ordering::AcqRel);
        if !Members::released_last(Members::from_bits(old), bits) {
            return 0;
        }
        // SAFETY: the last share is gone, so this thread is the record's only user; it came
        // from `KBox::leak` in `UnitAllocation::publish`.
        let record = unsafe { KBox::from_raw(record.as_ptr()) };
        self.free_pieces(&record, Pieces::new(record.len, PAGE_SIZE).count());
        record.len
    }

    /// The index of `slot`, one of the store's (its page of the disk).
    fn index_of(&self, slot: &Slot) -> usize {
        let base = self.slots.as_ptr() as usize;
        // The slot is one of the store's, at or after `base`.
        (core::ptr::from_ref(slot) as usize).wrapping_sub(base) / core::mem::size_of::<Slot>()
    }

    /// Gives up the share of the unit's page `slot`, which holds the record at `address` and is
    /// being emptied: returns the bytes of the unit's object if that freed it, else 0 (and 0,
    /// leaving the record alone, for a record of another unit, which the invariants exclude).
    ///
    /// # Safety
    ///
    /// The caller holds `slot`'s lock, and `slot` (one of this store's) holds the record's
    /// address as its content, which the caller empties before the unlock.
    #[cold]
    #[inline(never)]
    unsafe fn release_unit_page(&self, slot: &Slot, address: usize) -> usize {
        let Some(record) = NonNull::new(address as *mut UnitRecord) else {
            return 0;
        };
        // SAFETY: the slot holds the record, which stays alive while its lock is held
        // (invariant of `PageStore`; the caller's guarantee).
        let Some(place) = unsafe { record.as_ref() }.place(self.index_of(slot)) else {
            return 0;
        };
        // SAFETY: the slot held the record with the share of its place, which the caller's
        // emptying of the slot gives up.
        unsafe { self.release(record, Members::page(place)) }
    }

    /// Frees the first `count` pieces of `record`, which owns them and is being freed.
    fn free_pieces(&self, record: &UnitRecord, count: usize) {
        let pieces = Pieces::new(record.len, PAGE_SIZE);
        for (i, &raw) in record.pieces.iter().enumerate().take(count) {
            // SAFETY: piece `i` is a live handle of this pool of its piece's size, owned by the
            // record (type invariant), which is being freed and does not use it again.
            drop(unsafe { ZsHandle::from_raw(&self.pool, raw, pieces.range(i).len()) });
        }
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

    /// Whether slot `index` held a unit's page when its flags word was read, without taking its
    /// lock: a hint, as [`Self::may_hold_object`]'s.
    pub(crate) fn may_be_in_unit(&self, index: usize) -> bool {
        self.slots.get(index).is_some_and(Slot::held_unit_page)
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

impl<'a> UnitAllocation<'a> {
    /// Adds the next piece, `handle` (of the store's pool, its piece's size, filled); gives it
    /// back if it is not that.
    pub(crate) fn add_piece(
        &mut self,
        handle: ZsHandle<'a>,
    ) -> core::result::Result<(), ZsHandle<'a>> {
        if self.next_piece_size() != Some(handle.size()) || !handle.belongs_to(&self.store.pool) {
            return Err(handle);
        }
        let Some(piece) = self
            .record
            .as_mut()
            .and_then(|record| record.pieces.get_mut(self.added))
        else {
            return Err(handle);
        };
        // INVARIANT: the record owns the live handle, of its piece's size.
        *piece = handle.into_raw().0;
        self.added += 1;
        Ok(())
    }

    /// The size of the next piece to add, if one is missing.
    pub(crate) fn next_piece_size(&self) -> Option<usize> {
        let record = self.record.as_ref()?;
        let range = Pieces::new(record.len, PAGE_SIZE).range(self.added);
        (!range.is_empty()).then(|| range.len())
    }

    /// Publishes the record, with every piece added, for the pages of `members` (none of which
    /// refers to it yet); `None` (the record freed) if a piece is missing or `members` is
    /// empty or names a page past the unit.
    pub(crate) fn publish(mut self, members: Members) -> Option<UnitShares<'a>> {
        let record = self.record.as_ref()?;
        let unit = Members::all_but(UnitSize::from_shift(record.shift)?, Members::NONE);
        if self.next_piece_size().is_some()
            || members.is_empty()
            || members.bits() & !unit.bits() != 0
        {
            return None;
        }
        let record = self.record.take()?;
        record.members.store(members.bits(), Ordering::Relaxed);
        let len = record.len;
        // INVARIANT: a live record (leaked from its box, freed by the last share's release)
        // whose mask is exactly the shares.
        Some(UnitShares {
            record: NonNull::from(KBox::leak(record)),
            unplaced: members,
            store: self.store,
            len,
        })
    }
}

impl Drop for UnitAllocation<'_> {
    fn drop(&mut self) {
        if let Some(record) = &self.record {
            self.store.free_pieces(record, self.added);
        }
    }
}

impl UnitShares<'_> {
    /// The bytes of the object (its pieces').
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Releases the shares never stored; returns the bytes of the object if that freed it
    /// (its last pages were among them), else 0.
    pub(crate) fn release_rest(mut self) -> usize {
        let unplaced = core::mem::replace(&mut self.unplaced, Members::NONE);
        if unplaced.is_empty() {
            return 0;
        }
        // SAFETY: a live record of the store whose `unplaced` shares this value owned (type
        // invariant), given up here (the drop then releases nothing).
        unsafe { self.store.release(self.record, unplaced) }
    }
}

impl Drop for UnitShares<'_> {
    fn drop(&mut self) {
        if !self.unplaced.is_empty() {
            // SAFETY: as in `release_rest`.
            let _ = unsafe { self.store.release(self.record, self.unplaced) };
        }
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
    /// `zram_free_page()`); returns what it held. A unit's page gives its share of the unit's
    /// object up, which frees the object if it was the last.
    #[inline(always)]
    pub(crate) fn clear(&mut self) -> Removed {
        let mut old = self.content();
        match old {
            SlotContent::Stored { handle, size, .. } => {
                // SAFETY: a `Stored` slot owns a live handle of this store's pool (invariants of
                // `Slot` and `PageStore`); the slot is emptied right below, so it is not used
                // again.
                drop(unsafe { ZsHandle::from_raw(&self.store.pool, handle, size) });
            }
            SlotContent::InUnit(address) => {
                // SAFETY: this guard holds the slot's lock (type invariant) and the slot holds
                // the record at `address`; it is emptied right below. (The guard itself is not
                // passed, so that it never has to be built in memory on the paths without
                // units.)
                let freed = unsafe { self.store.release_unit_page(self.slot, address) };
                old = SlotContent::InUnit(freed);
            }
            SlotContent::Empty | SlotContent::Same(_) | SlotContent::WrittenBack(_) => {}
        }
        self.set_words(0, 0);
        self.set_access(0);
        Removed(old)
    }

    /// The slot's index in its store (its page of the disk).
    fn index(&self) -> usize {
        self.store.index_of(self.slot)
    }

    /// The record at `address`, which the slot holds (`InUnit`), and the slot's place in its
    /// unit; `None` (never, by the invariants) for a record of another unit.
    fn unit_record(&self, address: usize) -> Option<(NonNull<UnitRecord>, usize)> {
        let record = NonNull::new(address as *mut UnitRecord)?;
        // SAFETY: a slot holding a record's address keeps it alive while locked (invariant of
        // `PageStore`); this guard holds the lock.
        let place = unsafe { record.as_ref() }.place(self.index())?;
        Some((record, place))
    }

    /// For a unit's page: the slot's place in its unit, and what the unit's object is.
    pub(crate) fn unit_page(&self) -> Option<(usize, UnitObject)> {
        let SlotContent::InUnit(address) = self.content() else {
            return None;
        };
        let (record, place) = self.unit_record(address)?;
        // SAFETY: alive while the slot holds it under this guard's lock (see `unit_record`).
        let record = unsafe { record.as_ref() };
        let object = UnitObject {
            len: record.len,
            serial: record.serial,
        };
        Some((place, object))
    }

    /// For a unit's page: copies the unit's compressed bytes into the start of `dst`, with
    /// `scratch` where zsmalloc may copy a piece that spans two pages (as
    /// [`Self::read_object`]); returns what the object is, or `None` if the slot holds no
    /// unit's page or `dst` or `scratch` is too small.
    pub(crate) fn read_unit(&self, scratch: &mut [u8], dst: &mut [u8]) -> Option<UnitObject> {
        let SlotContent::InUnit(address) = self.content() else {
            return None;
        };
        let (record, _) = self.unit_record(address)?;
        // SAFETY: alive while the slot holds it under this guard's lock (see `unit_record`).
        let record = unsafe { record.as_ref() };
        let pieces = Pieces::new(record.len, PAGE_SIZE);
        for (i, &raw) in record.pieces.iter().enumerate().take(pieces.count()) {
            let range = pieces.range(i);
            let size = range.len();
            let to = dst.get_mut(range)?;
            // SAFETY: piece `i` is a live object of the pool of its piece's size, owned by the
            // record, which cannot be freed while this guard holds the slot's lock.
            unsafe {
                self.store
                    .pool
                    .read_raw(raw, size, scratch, |bytes| to.copy_from_slice(bytes))
            }?;
        }
        Some(UnitObject {
            len: record.len,
            serial: record.serial,
        })
    }

    /// Frees what the slot held and stores in it the share of its page in `shares`' unit
    /// object; returns the old content, or `None` (the slot unchanged) if `shares` has no
    /// share for this page.
    pub(crate) fn store_unit(&mut self, shares: &mut UnitShares<'_>) -> Option<Removed> {
        if !core::ptr::eq(shares.store, self.store) {
            return None;
        }
        if shares.unplaced.is_empty() {
            return None;
        }
        // SAFETY: a live record while `shares` holds an unplaced share of it (type invariant
        // of `UnitShares`; checked above); `shares` is borrowed for the call.
        let place = unsafe { shares.record.as_ref() }.place(self.index())?;
        if !shares.unplaced.contains(place) {
            return None;
        }
        let old = self.clear();
        shares.unplaced = shares.unplaced.without(place);
        // INVARIANT: the share of the page's place moves from `shares` to the slot.
        self.set_words(shares.record.as_ptr() as usize, slot::UNIT);
        Some(old)
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
    ) -> core::result::Result<Removed, ZsHandle<'p>> {
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
    pub(crate) fn store_same(&mut self, word: usize) -> Removed {
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
    pub(crate) fn store_written_back(&mut self, block: usize) -> Removed {
        let access = self.access_time();
        let kept_marks = self.flags & (Layout::INCOMPRESSIBLE | Layout::PRIORITY);
        let old = self.clear();
        let flags = match old {
            Removed(SlotContent::Stored { size, huge, .. })
                if Kernel::WRITTEN_BACK_KEEPS_OBJECT =>
            {
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
