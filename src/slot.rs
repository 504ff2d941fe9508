// SPDX-License-Identifier: GPL-2.0
//! Encoding of one slot of the page table: a value word and a flags word, laid out as C zram
//! lays out `struct zram_table_entry` (object size in bits 0..12, page flags from bit 13 in C's
//! order), plus one bit of zram_rs's own for the per-slot lock.
//!
//! The value word is a union decided by the flags: 0 for an empty slot, the fill word of a
//! same-filled page (`SAME`), or a zsmalloc handle (object size non-zero). Pure logic on plain
//! integers, shared with the host crate; `table.rs` adds the atomics and the lock.

/// Bits 0..12 of the flags word: the stored object's size in bytes (0..=4096).
pub const SIZE_MASK: u32 = (1 << FLAG_SHIFT) - 1;
/// First flag bit (`ZRAM_FLAG_SHIFT` for 4 KiB pages).
pub const FLAG_SHIFT: u32 = 13;
/// The page is one repeated machine word, kept in the value word (`ZRAM_SAME`).
pub const SAME: u32 = 1 << FLAG_SHIFT;
/// The page is stored uncompressed (`ZRAM_HUGE`).
pub const HUGE: u32 = 1 << (FLAG_SHIFT + 3);
/// The page was not accessed since `idle` marked it (`ZRAM_IDLE`); not part of the content.
pub const IDLE: u32 = 1 << (FLAG_SHIFT + 4);
/// The slot's lock bit; never part of the content.
pub const LOCK: u32 = 1 << 30;

/// Size of a page, the unit of one slot.
pub const PAGE_SIZE: usize = 4096;

/// What one slot holds, decoded from its two words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotContent {
    /// Never written, or freed: reads as zeroes.
    Empty,
    /// A page made of one repeated machine word.
    Same(usize),
    /// An object in the zsmalloc pool.
    Stored {
        /// The zsmalloc handle.
        handle: usize,
        /// Bytes of the object: less than a page when compressed, `PAGE_SIZE` when huge.
        size: usize,
        /// The page is stored uncompressed.
        huge: bool,
    },
}

/// Invalid slot words: a stored object with a size of 0 or above a page, or a zero handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidContent;

impl SlotContent {
    /// The (value, flags) words for this content; the lock bit is never set.
    pub fn encode(self) -> Result<(usize, u32), InvalidContent> {
        match self {
            SlotContent::Empty => Ok((0, 0)),
            SlotContent::Same(word) => Ok((word, SAME)),
            SlotContent::Stored { handle, size, huge } => {
                if handle == 0 || size == 0 || size > PAGE_SIZE {
                    return Err(InvalidContent);
                }
                let huge_bit = if huge { HUGE } else { 0 };
                Ok((handle, size as u32 | huge_bit))
            }
        }
    }

    /// Decodes the words of a slot, ignoring the lock bit.
    pub fn decode(value: usize, flags: u32) -> SlotContent {
        let size = (flags & SIZE_MASK) as usize;
        if flags & SAME != 0 {
            SlotContent::Same(value)
        } else if size != 0 {
            SlotContent::Stored {
                handle: value,
                size,
                huge: flags & HUGE != 0,
            }
        } else {
            SlotContent::Empty
        }
    }
}

/// The whole pages a discard or write-zeroes of `len` bytes at byte `start` frees, as C zram
/// computes them: a partial first page is skipped, and so is a partial last page.
pub fn discard_pages(start: u64, len: u64) -> core::ops::Range<u64> {
    let page = PAGE_SIZE as u64;
    let mut index = start / page;
    let offset = start % page;
    let mut remaining = len;
    if offset != 0 {
        if remaining <= page - offset {
            return index..index;
        }
        remaining -= page - offset;
        index += 1;
    }
    index..index + remaining / page
}
