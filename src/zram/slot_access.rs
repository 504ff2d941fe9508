// SPDX-License-Identifier: GPL-2.0
//! A slot read under its lock: what reads without decompression ([`Plain`]), locking a slot to
//! read it ([`lock_to_read`]), and the one "decompression context, then slot lock, then
//! re-check the algorithm" path ([`lock_with_reader`]) that reads after a wait, writeback and
//! recompression share: waiting for a context under a slot lock would break the lock order
//! (context, then slot), so the context is taken first and taken again if the slot's
//! algorithm changed meanwhile.

use super::counters::{Event, Stats};
use super::Storage;
use crate::comp::{self, ReaderDecompressor, ReaderGuard, UnitBuffers};
use crate::fill::fill;
use crate::kapi::mem;
use crate::slot::{Priority, SlotContent};
use crate::table::{SlotGuard, PAGE_SIZE};
use kernel::prelude::*;

/// What a slot holds that reads without decompression.
#[derive(Clone, Copy)]
pub(super) enum Plain {
    /// Never written or freed: zeroes.
    Empty,
    /// A same-filled page's word.
    Same(usize),
    /// A page stored whole.
    Huge,
}

impl Plain {
    /// `content` if it reads without decompression; `None` for a compressed object.
    #[inline(always)]
    pub(super) fn of(content: SlotContent) -> Option<Self> {
        match content {
            SlotContent::Empty => Some(Self::Empty),
            SlotContent::Same(word) => Some(Self::Same(word)),
            SlotContent::Stored { huge: true, .. } => Some(Self::Huge),
            // Read without the slot lock, from the backing device, or from its unit, by the
            // callers.
            SlotContent::Stored { huge: false, .. }
            | SlotContent::WrittenBack(_)
            | SlotContent::InUnit(_) => None,
        }
    }
}

/// How a compressed page is decompressed: with a borrowed decompression context, or without
/// one where the algorithm allows ([`comp::Stateless`] exists only then).
pub(super) enum Decompression<'s, 'g> {
    Reader(&'s mut ReaderGuard<'g>),
    Stateless(comp::Stateless),
}

/// Expands or copies page `index`, whose slot is locked and holds `plain`, into `out`
/// (`PAGE_SIZE` bytes).
#[inline(always)]
pub(super) fn read_plain(
    slot: &SlotGuard<'_>,
    plain: Plain,
    index: usize,
    out: &mut [u8],
) -> Result {
    match plain {
        Plain::Empty => fill(out, 0, 0),
        Plain::Same(word) => fill(out, 0, word as u64),
        // A whole-page object is never copied to be read (no scratch).
        Plain::Huge => {
            let copied = slot.read_object(&mut [], |object, _| {
                let whole = object.len() == out.len();
                if whole {
                    mem::copy_page_bytes(out, object);
                }
                whole
            });
            if copied != Some(true) {
                pr_err!("Decompression failed! page={}\n", index);
                return Err(EIO);
            }
        }
    }
    Ok(())
}

/// A slot found for a read: locked, with its content, or naming the backing device's block
/// that holds the page (unlocked: the device is read without the lock).
pub(super) enum Found<'s> {
    Locked(SlotGuard<'s>, SlotContent),
    WrittenBack(usize),
}

/// Locks slot `index` for a read at `now` (an access: the page is no longer idle).
#[inline(always)]
pub(super) fn lock_to_read(storage: &Storage, index: usize, now: u32) -> Result<Found<'_>> {
    let mut slot = storage.pages.lock(index).ok_or(EIO)?;
    slot.accessed(now);
    Ok(match slot.content() {
        SlotContent::WrittenBack(block) => Found::WrittenBack(block),
        content => Found::Locked(slot, content),
    })
}

/// Locks slot `index` with a decompression context of the algorithm that compressed its
/// object (the primary algorithm's for any other content; on 7.3 a written-back slot keeps its
/// object's): the context is taken first, as taking one may sleep and the slot lock may not,
/// and taken again if the slot's algorithm changed meanwhile. Runs `f` under the lock, and
/// returns the context, for use after the unlock, with its result; `None` if the slot cannot
/// be locked.
pub(super) fn lock_with_reader<'s, R>(
    storage: &'s Storage,
    index: usize,
    f: impl FnOnce(&mut SlotGuard<'_>, &mut ReaderGuard<'s>) -> R,
) -> Option<(ReaderGuard<'s>, R)> {
    let priority = storage.pages.lock(index)?.priority();
    lock_with_reader_of(storage, index, priority, f)
}

/// [`lock_with_reader`] for a caller that has just seen the slot's algorithm: a context of
/// `priority`'s first.
pub(super) fn lock_with_reader_of<'s, R>(
    storage: &'s Storage,
    index: usize,
    mut priority: Priority,
    f: impl FnOnce(&mut SlotGuard<'_>, &mut ReaderGuard<'s>) -> R,
) -> Option<(ReaderGuard<'s>, R)> {
    loop {
        let mut reader = storage.comp(priority)?.readers().get();
        let mut slot = storage.pages.lock(index)?;
        if slot.priority() == priority {
            let result = f(&mut slot, &mut reader);
            drop(slot);
            return Some((reader, result));
        }
        priority = slot.priority();
        drop(slot);
    }
}

/// Reads page `index`, whose locked slot holds `content` in memory (not written back), into
/// `out` (`PAGE_SIZE` bytes), decompressing with `reader` where needed; `part`: for a request
/// that covers only part of the page's compression unit, if it has one (`unit_stat`).
pub(super) fn read_locked(
    slot: &SlotGuard<'_>,
    content: SlotContent,
    index: usize,
    out: &mut [u8],
    reader: &mut ReaderGuard<'_>,
    stats: &Stats,
    part: bool,
) -> Result {
    match (Plain::of(content), content) {
        (Some(plain), _) => read_plain(slot, plain, index, out),
        (None, SlotContent::InUnit(_)) => read_unit_locked(slot, index, out, reader, stats, part),
        (None, _) => read_compressed(slot, index, out, Decompression::Reader(reader)),
    }
}

/// Reads page `index`, whose locked slot holds a page of a compression unit, into `out`
/// (`PAGE_SIZE` bytes): from `reader`'s unit buffer if it holds the unit already, else after
/// gathering the unit's pieces and decompressing it there (both counted in `stats`, and the
/// read as one of part of the unit with `part`).
pub(super) fn read_unit_locked(
    slot: &SlotGuard<'_>,
    index: usize,
    out: &mut [u8],
    reader: &mut ReaderGuard<'_>,
    stats: &Stats,
    part: bool,
) -> Result {
    stats.count(Event::UnitPageRead);
    if part {
        stats.count(Event::UnitPartRead);
    }
    let result = read_unit_into(slot, out, reader, stats);
    if result.is_err() {
        pr_err!("Decompression failed! page={}\n", index);
    }
    result
}

fn read_unit_into(
    slot: &SlotGuard<'_>,
    out: &mut [u8],
    reader: &mut ReaderGuard<'_>,
    stats: &Stats,
) -> Result {
    let (place, object) = slot.unit_page().ok_or(EIO)?;
    let UnitBuffers {
        scratch,
        unit_in,
        unit_out,
        serial,
        decompressor,
    } = reader.unit_buffers();
    if *serial != object.serial {
        *serial = 0;
        decompress_unit(
            slot,
            object.len,
            scratch,
            unit_in,
            decompressor,
            unit_out,
            stats,
        )?;
        *serial = object.serial;
    }
    let from = place * PAGE_SIZE;
    let page = unit_out.get(from..from + PAGE_SIZE).ok_or(EIO)?;
    out.copy_from_slice(page);
    Ok(())
}

/// Gathers the pieces of the object of the unit whose page's slot is `slot` (locked), `len`
/// compressed bytes, into `gathered` (with `scratch` where zsmalloc may copy a piece that spans
/// two pages) and decompresses them into `out`, the whole unit: a unit decompression in
/// `stats`.
pub(super) fn decompress_unit(
    slot: &SlotGuard<'_>,
    len: usize,
    scratch: &mut [u8],
    gathered: &mut [u8],
    decompressor: ReaderDecompressor<'_>,
    out: &mut [u8],
    stats: &Stats,
) -> Result {
    stats.count(Event::UnitDecompressed);
    slot.read_unit(scratch, gathered).ok_or(EIO)?;
    let src = gathered.get(..len).ok_or(EIO)?;
    decompressor.decompress_into(out, src)
}

/// Decompresses page `index`, whose locked slot holds a compressed object, into `out`
/// (`PAGE_SIZE` bytes).
#[inline(always)]
pub(super) fn read_compressed(
    slot: &SlotGuard<'_>,
    index: usize,
    out: &mut [u8],
    decompression: Decompression<'_, '_>,
) -> Result {
    let result = match decompression {
        Decompression::Reader(reader) => {
            // The context's scratch page is where zsmalloc may copy an object that spans pages.
            let (scratch, decompressor) = reader.scratch_and_decompressor();
            slot.read_object(scratch, |object, _| {
                decompressor.decompress_into(out, object)
            })
        }
        // Only where zsmalloc never needs a scratch buffer (`comp::Stateless`).
        Decompression::Stateless(stateless) => {
            slot.read_object(&mut [], |object, _| stateless.decompress(object, out))
        }
    }
    .unwrap_or(Err(EIO));
    if result.is_err() {
        pr_err!("Decompression failed! page={}\n", index);
    }
    result
}
