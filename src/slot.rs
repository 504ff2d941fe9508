// SPDX-License-Identifier: GPL-2.0
//! Encoding of one slot of the page table: a value word and a flags word, laid out as C zram
//! lays out `struct zram_table_entry` (object size in the low bits, page flags from
//! `ZRAM_FLAG_SHIFT = PAGE_SHIFT + 1` in C's order), plus bits of zram_rs's own for the
//! per-slot lock and its waiters. One slot per kernel page, whatever the page size: [`Layout`]
//! takes the kernel's `PAGE_SHIFT` as a parameter, so the host tests check 4, 16 and 64 KiB
//! pages. C zram's flag order moved between kernels (`ZRAM_HUGE` is `FLAG_SHIFT + 3` on 6.12,
//! `+ 4` on 7.3, with `ZRAM_IDLE` right after it), so that offset is a parameter too.
//!
//! The value word is a union decided by the flags: 0 for an empty slot, the fill word of a
//! same-filled page (`SAME`), the block of the backing device holding a written-back page
//! (`WB`), a zsmalloc handle (object size non-zero), whose two priority bits name the
//! algorithm that compressed it (0 the primary, 1 to 3 the recompression algorithms), or, with
//! zram_rs's own [`UNIT`] bit, the address of the record of a compression unit's object that
//! the page is part of (`unit.rs`). Pure logic on plain integers, shared with the host crate;
//! `table.rs` adds the atomics and the lock (its [`LOCK`] and [`WAITERS`] bits).

/// The slot's lock bit; never part of the content. Above every flag for pages up to 1 MiB.
pub const LOCK: u32 = 1 << 30;
/// Set by a thread that sleeps until the slot's lock is free, so that the unlock wakes it;
/// never part of the content.
pub const WAITERS: u32 = 1 << 31;
/// zram_rs's mark of a slot being recompressed; not part of the content. Any new content
/// clears it (it is not among the bits a new content keeps), a read does not.
pub const RECOMPRESSING: u32 = 1 << 29;
/// zram_rs's mark that nothing accessed a slot since a recompression marked it; not part of
/// the content. An access or any new content clears it, `idle` does not look at it.
pub const UNTOUCHED: u32 = 1 << 28;
/// zram_rs's content of a page stored in a compression unit's object: the value word is the
/// address of the unit's record ([`SlotContent::InUnit`]).
pub const UNIT: u32 = 1 << 27;

/// What one slot holds, decoded from its two words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotContent {
    /// Never written, or freed: reads as zeroes.
    Empty,
    /// A page made of one repeated machine word.
    Same(usize),
    /// A page written to the backing device, in this block (blocks of the page size: block `n`
    /// starts at byte `n * PAGE_SIZE`).
    WrittenBack(usize),
    /// A page of a compression unit's object, whose record is at this address (`table.rs`).
    InUnit(usize),
    /// An object in the zsmalloc pool.
    Stored {
        /// The zsmalloc handle.
        handle: usize,
        /// Bytes of the object: less than a page when compressed, the page size when huge.
        size: usize,
        /// The page is stored uncompressed.
        huge: bool,
        /// The algorithm that compressed it (the primary one for a huge page).
        priority: Priority,
    },
}

/// Algorithms a device may have: the primary one and three for recompression
/// (`ZRAM_MAX_COMPS`).
pub const MAX_PRIORITIES: usize = 4;

/// The priority of one of a device's algorithms: 0 for the primary one (`comp_algorithm`),
/// 1 to 3 for the recompression algorithms (`recomp_algorithm`).
///
/// # Invariants
///
/// The value is below [`MAX_PRIORITIES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Priority(u8);

impl Priority {
    /// The primary algorithm's.
    pub const PRIMARY: Self = Self(0);
    /// The first recompression algorithm's (`ZRAM_SECONDARY_COMP`).
    pub const SECONDARY: Self = Self(1);

    /// Priority `n`, if there is one.
    pub fn new(n: u64) -> Option<Self> {
        // INVARIANT: checked here.
        (n < MAX_PRIORITIES as u64).then_some(Self(n as u8))
    }

    /// The number.
    pub fn get(self) -> u8 {
        self.0
    }

    /// The number as an index into per-algorithm arrays of [`MAX_PRIORITIES`] entries.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// Every priority, from the primary one up.
    pub fn all() -> impl Iterator<Item = Self> {
        // INVARIANT: the range ends at `MAX_PRIORITIES`.
        (0..MAX_PRIORITIES as u8).map(Self)
    }
}

/// Invalid slot words: a stored object with a size of 0 or above a page, or a zero handle or
/// record address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidContent;

/// The slot layout for pages of `1 << PAGE_SHIFT` bytes, with C zram's `ZRAM_HUGE` at
/// `FLAG_SHIFT + HUGE_FLAG` (3 on 6.12, 4 on 7.3).
pub struct Layout<const PAGE_SHIFT: u32, const HUGE_FLAG: u32 = 3>;

impl<const PAGE_SHIFT: u32, const HUGE_FLAG: u32> Layout<PAGE_SHIFT, HUGE_FLAG> {
    /// Bytes of a page, the unit of one slot.
    pub const PAGE_SIZE: usize = 1 << PAGE_SHIFT;
    /// First flag bit (`ZRAM_FLAG_SHIFT`): the size field holds 0..=`PAGE_SIZE`.
    pub const FLAG_SHIFT: u32 = PAGE_SHIFT + 1;
    /// The low bits of the flags word: the stored object's size in bytes.
    pub const SIZE_MASK: u32 = (1 << Self::FLAG_SHIFT) - 1;
    /// The page is one repeated machine word, kept in the value word (`ZRAM_SAME`).
    pub const SAME: u32 = 1 << Self::FLAG_SHIFT;
    /// The page is on the backing device, in the block the value word names (`ZRAM_WB`).
    pub const WB: u32 = 1 << (Self::FLAG_SHIFT + HUGE_FLAG - 2);
    /// A writeback of the slot's content is in flight (C 6.12's `ZRAM_UNDER_WB`, 7.3's
    /// `ZRAM_PP_SLOT`); not part of the content. Any change of the content, and any access,
    /// clears it, so the writeback finds out whether it may replace the content.
    pub const IN_WRITEBACK: u32 = 1 << (Self::FLAG_SHIFT + HUGE_FLAG - 1);
    /// The page is stored uncompressed (`ZRAM_HUGE`).
    pub const HUGE: u32 = 1 << (Self::FLAG_SHIFT + HUGE_FLAG);
    /// The page was not accessed since `idle` marked it (`ZRAM_IDLE`); not part of the content.
    pub const IDLE: u32 = 1 << (Self::FLAG_SHIFT + HUGE_FLAG + 1);
    /// No recompression algorithm stores the object in a smaller size class
    /// (`ZRAM_INCOMPRESSIBLE`): `recompress` skips it, `writeback incompressible` takes it. Not
    /// part of the content; any new content clears it.
    pub const INCOMPRESSIBLE: u32 = 1 << (Self::FLAG_SHIFT + HUGE_FLAG + 2);
    /// The first of the two bits of an object's algorithm priority (`ZRAM_COMP_PRIORITY_BIT1`).
    pub const PRIORITY_SHIFT: u32 = Self::FLAG_SHIFT + HUGE_FLAG + 3;
    /// Both priority bits.
    pub const PRIORITY: u32 = 0b11 << Self::PRIORITY_SHIFT;

    /// Evaluated where the layout is used: every flag (C's last ones are the two
    /// `ZRAM_COMP_PRIORITY` bits, `ZRAM_HUGE + 3` and `+ 4`) lies below zram_rs's own
    /// [`UNIT`], [`UNTOUCHED`], [`RECOMPRESSING`], [`LOCK`] and [`WAITERS`] bits.
    pub const VALID: () =
        assert!(Self::FLAG_SHIFT + HUGE_FLAG + 4 < 27 && PAGE_SHIFT >= 9 && HUGE_FLAG >= 3);

    /// The (value, flags) words for `content`; the lock bit is never set.
    pub fn encode(content: SlotContent) -> Result<(usize, u32), InvalidContent> {
        match content {
            SlotContent::Empty => Ok((0, 0)),
            SlotContent::Same(word) => Ok((word, Self::SAME)),
            SlotContent::WrittenBack(block) => Ok((block, Self::WB)),
            SlotContent::InUnit(0) => Err(InvalidContent),
            SlotContent::InUnit(record) => Ok((record, UNIT)),
            SlotContent::Stored {
                handle,
                size,
                huge,
                priority,
            } => {
                if handle == 0 || size == 0 || size > Self::PAGE_SIZE {
                    return Err(InvalidContent);
                }
                Ok(Self::encode_object(handle, size, huge, priority))
            }
        }
    }

    /// [`Self::encode`] of a stored object without its checks, for the write path: `handle`
    /// and `size` come from a live pool object, whose handle is never 0 and whose size lies in
    /// `1..=PAGE_SIZE`. (Other values would decode as another content, never as this object.)
    #[inline(always)]
    pub fn encode_object(
        handle: usize,
        size: usize,
        huge: bool,
        priority: Priority,
    ) -> (usize, u32) {
        let huge_bit = if huge { Self::HUGE } else { 0 };
        // Below 4 (invariant of `Priority`): within the two bits.
        let priority_bits = u32::from(priority.get()) << Self::PRIORITY_SHIFT;
        // No truncation: `size <= PAGE_SIZE <= SIZE_MASK`.
        (handle, size as u32 | huge_bit | priority_bits)
    }

    /// Decodes the words of a slot, ignoring the lock, waiters, idle, incompressible and
    /// in-writeback bits.
    #[inline(always)]
    pub fn decode(value: usize, flags: u32) -> SlotContent {
        let size = (flags & Self::SIZE_MASK) as usize;
        // A unit's page has none of C's content bits (its size field is 0): tested last, so
        // that the other contents cost what they did before units.
        if flags & Self::SAME != 0 {
            SlotContent::Same(value)
        } else if flags & Self::WB != 0 {
            SlotContent::WrittenBack(value)
        } else if size != 0 {
            SlotContent::Stored {
                handle: value,
                size,
                huge: flags & Self::HUGE != 0,
                priority: Self::priority(flags),
            }
        } else if flags & UNIT != 0 {
            SlotContent::InUnit(value)
        } else {
            SlotContent::Empty
        }
    }

    /// The priority bits of a flags word: those of a stored object, or on 7.3 those a
    /// written-back slot keeps.
    #[inline(always)]
    pub fn priority(flags: u32) -> Priority {
        // INVARIANT: two bits, below 4 (`MAX_PRIORITIES`).
        Priority(((flags & Self::PRIORITY) >> Self::PRIORITY_SHIFT) as u8)
    }

    /// The flags word after an `idle` write that finds the slot `idle` (by its access time) or
    /// not: C zram's `mark_idle()` marks or unmarks slots holding an object (a unit's page as
    /// one), and leaves empty, same-filled and written-back slots alone (no post-processing
    /// applies to them), and slots being written back (6.12's `ZRAM_UNDER_WB`).
    pub fn mark_idle(value: usize, flags: u32, idle: bool) -> u32 {
        if flags & Self::IN_WRITEBACK != 0 {
            return flags;
        }
        match Self::decode(value, flags) {
            SlotContent::Stored { .. } | SlotContent::InUnit(_) if idle => flags | Self::IDLE,
            SlotContent::Stored { .. } | SlotContent::InUnit(_) => flags & !Self::IDLE,
            SlotContent::Empty | SlotContent::Same(_) | SlotContent::WrittenBack(_) => flags,
        }
    }

    /// The whole pages a discard of `len` bytes at byte `start` frees, as C zram computes them:
    /// a partial first page is skipped, and so is a partial last page.
    pub fn discard_pages(start: u64, len: u64) -> core::ops::Range<u64> {
        let page = Self::PAGE_SIZE as u64;
        let mut index = start >> PAGE_SHIFT;
        let offset = start & (page - 1);
        let mut remaining = len;
        if offset != 0 {
            if remaining <= page - offset {
                return index..index;
            }
            remaining -= page - offset;
            index += 1;
        }
        // No overflow: `start + len` of a bio fits in u64, so the end does too.
        index..index + (remaining >> PAGE_SHIFT)
    }
}
