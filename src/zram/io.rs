// SPDX-License-Identifier: GPL-2.0
//! The block I/O path: a bio's pieces (whole pages, or parts of one through a bounce page; on a
//! device with compression units, the pieces of the units a write covers whole gathered into
//! them, and the units a read covers whole in contiguous pages read at once by `unit_read.rs`)
//! read and written, discards and swap's slot-free notifications ([`DiskOps`], called
//! from the disk's `submit_bio` and `swap_slot_free_notify`), with the failure counters.

use super::counters::Event;
use super::page_io::{BioStream, ReadAt};
use super::{Storage, Zram};
use crate::fill::fill;
use crate::kapi::bio::{Bio, PageDest, Piece};
use crate::kapi::bounce::BouncePage;
use crate::kapi::disk::DiskOps;
use crate::kapi::time;
use crate::slot::SlotContent;
use crate::table::{Layout, PAGE_SIZE};
use kernel::prelude::*;
use kernel::sync::ArcBorrow;

impl Zram {
    /// Reads one piece of a read bio into `out`: a whole page (from the backing device by a read
    /// chained to the bio), or a part of one; `part`: the bio covers only part of the page's
    /// compression unit.
    #[inline(always)]
    fn read_piece(
        &self,
        storage: ArcBorrow<'_, Storage>,
        piece: Piece,
        out: &mut [u8],
        dest: PageDest<'_>,
        now: u32,
        part: bool,
    ) -> Result {
        if piece.len == PAGE_SIZE {
            let at = ReadAt { now, part };
            self.read_page(&storage, piece.index, out, Some(dest), Some(storage), at)
        } else {
            self.read_part_of_page(&storage, piece.index, piece.offset, out, now)
        }
    }

    /// Reads the part of page `index` from byte `offset` that `out` covers (less than a page).
    /// Takes scalars rather than a [`Piece`], which would be built in memory on every page read.
    #[inline(never)]
    fn read_part_of_page(
        &self,
        storage: &Storage,
        index: usize,
        offset: usize,
        out: &mut [u8],
        now: u32,
    ) -> Result {
        // Part of an empty or same-filled page expands straight into the requested range: no
        // bounce page, no copy. A page that holds an object (by a look at its flags) is read
        // whole into a bounce page, allocated before its slot is locked, as C reads every part
        // of a page.
        if !storage.pages.may_hold_object(index) {
            let mut slot = storage.pages.lock(index).ok_or(EIO)?;
            slot.accessed(now);
            match slot.content() {
                SlotContent::Empty => {
                    fill(out, offset, 0);
                    return Ok(());
                }
                SlotContent::Same(word) => {
                    fill(out, offset, word as u64);
                    return Ok(());
                }
                SlotContent::WrittenBack(block) => {
                    drop(slot);
                    return self.read_written_back(storage, index, block, offset, out, None);
                }
                // Stored since the look.
                SlotContent::Stored { .. } | SlotContent::InUnit(_) => {}
            }
        }
        let mut bounce = BouncePage::new()?;
        let page = bounce.bytes_mut();
        let at = ReadAt { now, part: true };
        self.read_page(storage, index, page, None, None, at)?;
        let part = page.get(offset..offset + out.len()).ok_or(EIO)?;
        out.copy_from_slice(part);
        Ok(())
    }

    /// Writes one piece of a write bio: a whole page, or a part of one.
    #[inline(always)]
    fn write_piece<'a>(
        &self,
        storage: &'a Storage,
        stream: &mut BioStream<'a>,
        piece: Piece,
        data: &[u8],
        now: u32,
    ) -> Result {
        if piece.len == PAGE_SIZE {
            self.write_page(storage, stream, piece.index, data, now)
        } else {
            self.write_part_of_page(storage, stream, piece.index, piece.offset, data, now)
        }
    }

    /// Writes `data` into page `index` from byte `offset` (less than a page): reads the page,
    /// patches it, writes it back. The bio's stream goes back first: the read may wait for a
    /// decompression context.
    #[inline(never)]
    fn write_part_of_page<'a>(
        &self,
        storage: &'a Storage,
        stream: &mut BioStream<'a>,
        index: usize,
        offset: usize,
        data: &[u8],
        now: u32,
    ) -> Result {
        stream.give_back();
        let mut bounce = BouncePage::new()?;
        let page = bounce.bytes_mut();
        let at = ReadAt { now, part: true };
        self.read_page(storage, index, page, None, None, at)?;
        page.get_mut(offset..offset + data.len())
            .ok_or(EIO)?
            .copy_from_slice(data);
        self.write_page(storage, stream, index, page, now)
    }

    /// [`DiskOps::read`] on a device with compression units of several pages: the units the bio
    /// covers whole whose pages one of its bvecs holds contiguously are decompressed straight
    /// into them ([`Self::read_unit_run`]); the other pieces are read as on any device, each
    /// page knowing whether the bio covers its unit whole (`unit_stat`).
    #[inline(never)]
    fn read_with_units(
        &self,
        storage: ArcBorrow<'_, Storage>,
        bio: &mut Bio<'_>,
        now: u32,
    ) -> Result {
        let size = storage.unit;
        let units = whole_units(&storage, bio);
        bio.for_each_piece_or_run_out(
            |index| match size.locate(index as u64) {
                (unit, 0) if units.contains(&unit) => size.pages(),
                _ => 0,
            },
            |first, run| self.read_unit_run(storage, first, run, now),
            |piece, out, dest| {
                let part = !units.contains(&size.locate(piece.index as u64).0);
                self.read_piece(storage, piece, out, dest, now, part)
            },
        )
        .inspect_err(|_| {
            self.stats.count(Event::FailedRead);
        })
    }

    /// [`DiskOps::write`] on a device with compression units of several pages: the pieces of
    /// the units the bio covers whole are gathered and stored by unit, the others page by page.
    #[inline(never)]
    fn write_with_units(&self, storage: &Storage, bio: &Bio<'_>, now: u32) -> Result {
        // Given back when the walk ends: one borrow for the bio's pages.
        let mut stream = BioStream::default();
        let units = whole_units(storage, bio);
        bio.for_each_piece_in(|piece, data| {
            if units.contains(&storage.unit.locate(piece.index as u64).0) {
                self.gather_piece(storage, &mut stream, bio, piece, data, now)
            } else {
                self.write_piece(storage, &mut stream, piece, data, now)
            }
        })
        .inspect_err(|_| {
            self.stats.count(Event::FailedWrite);
        })
    }

    /// Copies one piece of a write bio that lies in a whole compression unit into the bio's
    /// stream's gathering buffer (borrowing the stream at the unit's first byte, and keeping
    /// it to the unit's last), and stores the unit once its last byte is there.
    #[inline(never)]
    fn gather_piece<'a>(
        &self,
        storage: &'a Storage,
        stream: &mut BioStream<'a>,
        bio: &Bio<'_>,
        piece: Piece,
        data: &[u8],
        now: u32,
    ) -> Result {
        let (unit, place) = storage.unit.locate(piece.index as u64);
        if place == 0 && piece.offset == 0 {
            stream.hold(storage);
        }
        let at = place * PAGE_SIZE + piece.offset;
        stream
            .gathered_mut()
            .and_then(|gathered| gathered.get_mut(at..at + data.len()))
            .ok_or(EIO)?
            .copy_from_slice(data);
        if place + 1 == storage.unit.pages() && piece.offset + data.len() == PAGE_SIZE {
            let first = usize::try_from(storage.unit.pages_of(unit).start).map_err(|_| EIO)?;
            if !self.write_unit(storage, stream, first, now)? {
                self.write_unit_by_pages(storage, stream, bio, unit, now)?;
            }
        }
        Ok(())
    }

    /// Stores the pages of the unit `unit`, whose bytes `bio` carries, page by page as pieces
    /// outside units are stored: walks the bio again for them (no copy is kept, and a page's
    /// allocation with reclaim gives the stream, with the gathered unit, back). For a unit not
    /// worth an object, or whose object cannot be allocated without reclaim.
    #[cold]
    fn write_unit_by_pages<'a>(
        &self,
        storage: &'a Storage,
        stream: &mut BioStream<'a>,
        bio: &Bio<'_>,
        unit: u64,
        now: u32,
    ) -> Result {
        self.stats.count(Event::UnitByPages);
        bio.for_each_piece_in(|piece, data| {
            if storage.unit.locate(piece.index as u64).0 != unit {
                return Ok(());
            }
            self.write_piece(storage, stream, piece, data, now)
        })
    }

    fn free_page(&self, storage: &Storage, index: usize) {
        if let Some(mut slot) = storage.pages.lock(index) {
            let old = slot.clear();
            drop(slot);
            storage.removed(&self.stats, old);
        }
    }
}

impl DiskOps for Zram {
    type Io = Storage;

    // The I/O methods are inlined into the disk's `submit_bio` callback: one frame per bio.
    #[inline(always)]
    fn read(&self, storage: ArcBorrow<'_, Storage>, bio: &mut Bio<'_>) -> Result {
        let now = access_time();
        if !storage.unit.is_page() {
            return self.read_with_units(storage, bio, now);
        }
        bio.for_each_piece_out(|piece, out, dest| {
            self.read_piece(storage, piece, out, dest, now, false)
        })
        .inspect_err(|_| {
            self.stats.count(Event::FailedRead);
        })
    }

    #[inline(always)]
    fn write(&self, storage: &Storage, bio: &Bio<'_>) -> Result {
        let now = access_time();
        if !storage.unit.is_page() {
            return self.write_with_units(storage, bio, now);
        }
        // Given back when the walk ends: one borrow for the bio's pages.
        let mut stream = BioStream::default();
        bio.for_each_piece_in(|piece, data| {
            self.write_piece(storage, &mut stream, piece, data, now)
        })
        .inspect_err(|_| {
            self.stats.count(Event::FailedWrite);
        })
    }

    fn discard(&self, storage: &Storage, start: u64, len: u64) {
        for index in Layout::discard_pages(start, len) {
            self.free_page(storage, index as usize);
            self.stats.count(Event::NotifyFree);
        }
    }

    fn swap_slot_free_notify(&self, storage: Option<&Storage>, index: usize) {
        self.stats.count(Event::NotifyFree);
        let Some(storage) = storage else {
            return;
        };
        match storage.pages.try_lock(index) {
            Some(mut slot) => {
                let old = slot.clear();
                drop(slot);
                storage.removed(&self.stats, old);
            }
            None => {
                self.stats.count(Event::MissFree);
            }
        };
    }
}

/// The access time of the pages of one request: whole seconds of boot time, as C 7.3 keeps
/// them (`(u32)ktime_get_boottime_seconds()`; 6.12 keeps nanoseconds), read once per bio; 0
/// where C zram keeps none (without `CONFIG_ZRAM_TRACK_ENTRY_ACTIME`).
#[inline(always)]
fn access_time() -> u32 {
    if !cfg!(zram_rs_track_entry_actime) {
        return 0;
    }
    // Truncation as C's: wraps after 136 years of uptime.
    time::boottime_seconds() as u32
}

/// The compression units a write bio covers whole: those of the whole pages it covers.
fn whole_units(storage: &Storage, bio: &Bio<'_>) -> core::ops::Range<u64> {
    let page = PAGE_SIZE as u64;
    let start = bio.start_byte();
    // No overflow: a bio's end fits in u64 (sectors of a disk).
    let end = start.saturating_add(bio.len());
    let first = start.div_ceil(page);
    let last = end / page;
    storage.unit.whole_units(first..last.max(first))
}
