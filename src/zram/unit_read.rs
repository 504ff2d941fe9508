// SPDX-License-Identifier: GPL-2.0
//! Reads of whole compression units straight into a read bio's pages: a unit that the bio
//! covers whole and whose pages one bvec holds contiguously (a large folio swapped in, a large
//! page-cache folio; [`PageRun`]) is decompressed once into them, without the read context's
//! unit buffer and a copy of each page out of it. The unit's pages that no longer refer to the
//! decompressed object (overwritten, discarded, written back since) are then read one by one
//! over what the decompression left in their place, as any page is.

use super::counters::{Event, Stats};
use super::page_io::ReadAt;
use super::slot_access::{decompress_unit, lock_to_read, lock_with_reader_of, Found};
use super::{Storage, Zram};
use crate::comp::{ReaderGuard, UnitBuffers};
use crate::kapi::bio::PageRun;
use crate::slot::{Priority, SlotContent};
use crate::table::SlotGuard;
use kernel::prelude::*;
use kernel::sync::ArcBorrow;

impl Zram {
    /// Reads the unit whose first page is `first` into `run`, its pages (the unit's size), an
    /// access at `now`: the unit's object, found through its first page that looks like one
    /// of its pages (its others may be same-filled), decompressed into the whole run; then each
    /// page that does not refer to that object read over its place, as any page.
    #[inline(never)]
    pub(super) fn read_unit_run(
        &self,
        storage: ArcBorrow<'_, Storage>,
        first: usize,
        mut run: PageRun<'_>,
        now: u32,
    ) -> Result {
        let pages = storage.unit.pages();
        let object = match (0..pages).find(|&place| storage.pages.may_be_in_unit(first + place)) {
            Some(place) => self.decompress_run(&storage, first + place, run.bytes(), now)?,
            None => None,
        };
        let at = ReadAt { now, part: false };
        for place in 0..pages {
            let index = first + place;
            if let Some((serial, decompressed_at)) = object {
                if place == decompressed_at
                    || still_refers(&storage, index, place, serial, now, &self.stats)?
                {
                    continue;
                }
            }
            let (out, dest) = run.page(place).ok_or(EIO)?;
            self.read_page(&storage, index, out, Some(dest), Some(storage), at)?;
        }
        Ok(())
    }

    /// Decompresses the object of the unit of page `index` into `out`, the whole unit, if the
    /// page's slot holds a unit's page when locked (an access at `now`); returns the object's
    /// serial number and the page's place in the unit, or `None` (nothing written to `out`).
    fn decompress_run(
        &self,
        storage: &Storage,
        index: usize,
        out: &mut [u8],
        now: u32,
    ) -> Result<Option<(u64, usize)>> {
        // A unit's object is compressed by the primary algorithm (its context first, as every
        // read of a unit's page takes one).
        let (reader, decompressed) =
            lock_with_reader_of(storage, index, Priority::PRIMARY, |slot, reader| {
                slot.accessed(now);
                decompress_locked(slot, reader, out, &self.stats)
            })
            .ok_or(EIO)?;
        drop(reader);
        decompressed.inspect_err(|_| {
            pr_err!("Decompression failed! page={}\n", index);
        })
    }
}

/// Decompresses the object of the unit whose page's slot is `slot` (locked) into `out`, the
/// whole unit, with `reader`; returns the object's serial number and the page's place, or
/// `None` (nothing written to `out`) if the slot holds no unit's page.
fn decompress_locked(
    slot: &SlotGuard<'_>,
    reader: &mut ReaderGuard<'_>,
    out: &mut [u8],
    stats: &Stats,
) -> Result<Option<(u64, usize)>> {
    let Some((place, object)) = slot.unit_page() else {
        return Ok(None);
    };
    let UnitBuffers {
        scratch,
        unit_in,
        decompressor,
        ..
    } = reader.unit_buffers();
    decompress_unit(slot, object.len, scratch, unit_in, decompressor, out, stats)?;
    stats.count(Event::UnitRunRead);
    stats.count(Event::UnitPageRead);
    Ok(Some((object.serial, place)))
}

/// Whether page `index`, at `place` in its unit, still refers to the unit's object `serial`
/// (whose decompression holds its content then), an access at `now`.
fn still_refers(
    storage: &Storage,
    index: usize,
    place: usize,
    serial: u64,
    now: u32,
    stats: &Stats,
) -> Result<bool> {
    let Found::Locked(slot, SlotContent::InUnit(_)) = lock_to_read(storage, index, now)? else {
        return Ok(false);
    };
    let refers =
        matches!(slot.unit_page(), Some((at, object)) if at == place && object.serial == serial);
    if refers {
        stats.count(Event::UnitPageRead);
    }
    Ok(refers)
}
