// SPDX-License-Identifier: GPL-2.0
//! One whole page read or written: a read locks the slot and expands, copies or decompresses
//! what it holds (with a decompression context taken without waiting, or after waiting for one
//! without the slot lock: never a compression stream), or reads it from the backing device; a
//! write stores a same-filled page's word or compresses the page into a new pool object,
//! allocating as C zram does (without reclaim first, then with it after giving the stream
//! back), under the memory limit. A compression unit gathered by a write bio is stored here
//! too: its same-filled pages as words, the rest as one object in pieces with its record.

use super::counters::Event;
use super::slot_access::{
    lock_to_read, lock_with_reader_of, read_compressed, read_locked, read_plain, Decompression,
    Found, Plain,
};
use super::{Storage, Zram};
use crate::abi::Abi;
use crate::comp::StreamGuard;
use crate::kapi::bio::PageDest;
use crate::kapi::mem;
use crate::kapi::zspool::{ZsHandle, ZsPool};
use crate::same::same_filled;
use crate::slot::{Priority, SlotContent};
use crate::table::{UnitShares, PAGE_SIZE};
use crate::unit::{Members, Pieces, MAX_UNIT_PAGES};
use crate::Kernel;
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;
use kernel::sync::ArcBorrow;

/// A page read's circumstances, passed as one word: its access time (whole seconds, as
/// [`super::io`] reads it once per bio) and whether its request covers only part of the page's
/// compression unit (`unit_stat`; always `false` on devices of one-page units).
#[derive(Clone, Copy)]
pub(super) struct ReadAt {
    pub(super) now: u32,
    pub(super) part: bool,
}

impl Zram {
    /// Reads page `index` into `out` (`PAGE_SIZE` bytes), an access `at` ([`ReadAt`]). With
    /// `dest` (and `owner`, the storage's reference that work completing the bio keeps), `out` is
    /// a whole page of a bio being read, to which a read of the backing device is chained;
    /// without it, that read is waited for. The two come apart and become a [`Chain`] only for
    /// a page found written back: built in memory for every page, the chain cost four stores.
    #[inline(always)]
    pub(super) fn read_page(
        &self,
        storage: &Storage,
        index: usize,
        out: &mut [u8],
        dest: Option<PageDest<'_>>,
        owner: Option<ArcBorrow<'_, Storage>>,
        at: ReadAt,
    ) -> Result {
        let (slot, content) = match lock_to_read(storage, index, at.now)? {
            Found::Locked(slot, content) => (slot, content),
            Found::WrittenBack(block) => {
                let chain = Chain::of(dest, owner);
                return self.read_written_back(storage, index, block, 0, out, chain);
            }
        };
        if let Some(plain) = Plain::of(content) {
            return read_plain(&slot, plain, index, out);
        }
        // The algorithm that compressed the object: the primary one, or a recompression one
        // (the primary one for a compression unit's page).
        let priority = slot.priority();
        // A unit's page is read as after a wait, below: with a context taken before the slot
        // lock (its unit buffer may hold the unit already).
        let unit = matches!(content, SlotContent::InUnit(_));
        if !unit {
            let codec = storage.comp(priority).ok_or(EIO)?;
            if let Some(stateless) = codec.stateless() {
                return read_compressed(&slot, index, out, Decompression::Stateless(stateless));
            }
            // A free decompression context is taken without waiting, under the slot lock.
            if let Some(mut reader) = codec.readers().try_get() {
                let result = read_compressed(&slot, index, out, Decompression::Reader(&mut reader));
                // Unlock before the context goes back: returning it may wake a waiting
                // borrower, which takes a mutex.
                drop(slot);
                drop(reader);
                return result;
            }
        }
        drop(slot);
        if !unit {
            self.stats.count(Event::ReadWaited);
        }
        let chain = Chain::of(dest, owner);
        self.read_page_after_wait(storage, index, out, chain, at, priority)
    }

    /// Stores the compression unit whose first page is `first`, gathered in the bio's stream
    /// `held`, an access at `now`: its same-filled pages as their words, the others in one
    /// object ([`Self::unit_object`]); `false` (nothing stored) when the unit compresses to the
    /// huge class of each of its pages or more, or its object cannot be allocated without
    /// reclaim: the caller then stores it page by page.
    pub(super) fn write_unit<'a>(
        &self,
        storage: &'a Storage,
        held: &mut BioStream<'a>,
        first: usize,
        now: u32,
    ) -> Result<bool> {
        let size = storage.unit;
        match first.checked_add(size.pages()) {
            Some(end) if end <= storage.pages.pages() => {}
            _ => return Err(EIO),
        }
        let stream = held.0.as_mut().ok_or(EIO)?;
        let mut apart = Members::NONE;
        let mut words = [0usize; MAX_UNIT_PAGES];
        if self.same_detection.load(Relaxed) {
            let pages = stream.gathered().chunks_exact(PAGE_SIZE);
            for ((place, page), word) in pages.enumerate().zip(words.iter_mut()) {
                if let Some(same) = same_filled(page) {
                    apart = apart.with(place);
                    *word = same as usize;
                }
            }
        }
        let members = Members::all_but(size, apart);
        let shares = if members.is_empty() {
            None
        } else {
            match self.unit_object(storage, stream, first, members)? {
                Some(shares) => Some(shares),
                None => return Ok(false),
            }
        };
        let len = shares.as_ref().map_or(0, UnitShares::len);
        let mut shares = shares;
        let mut accounted = false;
        let mut stored = Ok(());
        for (place, &word) in words.iter().enumerate().take(size.pages()) {
            let Some(mut slot) = storage.pages.lock(first + place) else {
                stored = Err(EIO);
                break;
            };
            let old = if apart.contains(place) {
                self.stats.stored_same(word);
                slot.store_same(word)
            } else {
                let Some(old) = shares.as_mut().and_then(|shares| slot.store_unit(shares)) else {
                    stored = Err(EIO);
                    break;
                };
                self.stats.stored_unit_page(!accounted, len);
                accounted = true;
                old
            };
            slot.accessed(now);
            drop(slot);
            storage.removed(&self.stats, old);
        }
        // Every share is stored but after a failure, which never happens (the pages are the
        // disk's, checked above); the object's bytes were accounted with its first page.
        if let Some(shares) = shares {
            let freed = shares.release_rest();
            if accounted {
                self.stats.unit_object_freed(freed);
            }
        }
        stored.map(|()| true)
    }

    /// Compresses the unit gathered in `stream` into pieces of the pool and a record for the
    /// pages of `members` (the unit's first page `first`): `None` when the unit is not worth an
    /// object or its pieces or record cannot be allocated without reclaim (the unit is then
    /// stored page by page, where a page's allocation may reclaim, as C's); `ENOMEM` above the
    /// memory limit.
    fn unit_object<'a>(
        &self,
        storage: &'a Storage,
        stream: &mut StreamGuard<'a>,
        first: usize,
        members: Members,
    ) -> Result<Option<UnitShares<'a>>> {
        let pool = storage.pages.pool();
        let compressed = stream.compress_gathered().inspect_err(|e| {
            pr_err!("Compression failed! err={}\n", e.to_errno());
        })?;
        if !storage
            .unit
            .worth_an_object(compressed.len(), storage.huge_class_size)
        {
            return Ok(None);
        }
        let Ok(mut unit) = storage
            .pages
            .new_unit(storage.unit, first, compressed.len())
        else {
            return Ok(None);
        };
        for range in Pieces::new(compressed.len(), PAGE_SIZE).ranges() {
            let Ok(handle) = pool.alloc(range.len(), mem::GFP_POOL_OBJECT_FAST) else {
                return Ok(None);
            };
            let used = pool.total_pages();
            self.stats.pool_used(used);
            let limit = self.limit_pages.load(Relaxed);
            if limit != 0 && used > limit {
                return Err(ENOMEM);
            }
            handle.write(compressed.get(range).ok_or(EIO)?);
            unit.add_piece(handle).map_err(|_| EIO)?;
        }
        Ok(unit.publish(members))
    }

    /// [`Self::read_page`] when every decompression context of the algorithm of `priority` is
    /// busy (with other reads: compression has its own streams), and for a compression unit's
    /// page: takes one (waiting if all are lent out), which may sleep and so happens without
    /// the slot lock, then reads the page as it is by then
    /// ([`lock_with_reader_of`]: again with another algorithm's context if it was recompressed
    /// or rewritten meanwhile), or from the backing device once the context has gone back.
    #[inline(never)]
    fn read_page_after_wait(
        &self,
        storage: &Storage,
        index: usize,
        out: &mut [u8],
        dest: Option<Chain<'_>>,
        at: ReadAt,
        priority: Priority,
    ) -> Result {
        let found = lock_with_reader_of(storage, index, priority, |slot, reader| {
            slot.accessed(at.now);
            match slot.content() {
                SlotContent::WrittenBack(block) => Err(block),
                content => Ok(read_locked(
                    slot,
                    content,
                    index,
                    out,
                    reader,
                    &self.stats,
                    at.part,
                )),
            }
        });
        match found.ok_or(EIO)? {
            (_reader, Ok(read)) => read,
            (reader, Err(block)) => {
                drop(reader);
                self.read_written_back(storage, index, block, 0, out, dest)
            }
        }
    }

    /// Compresses `data` (`PAGE_SIZE` bytes) and stores it as page `index`, an access at `now`
    /// (seconds), with the stream its write bio holds, if any; a page that does not compress
    /// below zsmalloc's huge class is stored as it is.
    #[inline(always)]
    pub(super) fn write_page<'a>(
        &self,
        storage: &'a Storage,
        stream: &mut BioStream<'a>,
        index: usize,
        data: &[u8],
        now: u32,
    ) -> Result {
        if index >= storage.pages.pages() {
            return Err(EIO);
        }
        if self.same_detection.load(Relaxed) {
            if let Some(word) = same_filled(data) {
                // Nothing to compress or allocate: the slot keeps the word.
                let word = word as usize;
                let mut slot = storage.pages.lock(index).ok_or(EIO)?;
                self.stats.stored_same(word);
                let old = slot.store_same(word);
                slot.accessed(now);
                drop(slot);
                storage.removed(&self.stats, old);
                return Ok(());
            }
        }
        let (handle, huge) = self.compress_into_object(storage, stream, data)?;
        let size = handle.size();
        let mut slot = storage.pages.lock(index).ok_or(EIO)?;
        // Fails only for a handle of another pool, which `compress_into_object` never makes;
        // the handle is then freed on return.
        let old = slot
            .store_object(handle, huge, Priority::PRIMARY)
            .map_err(|_| EIO)?;
        self.stats.stored_object(size, huge);
        slot.accessed(now);
        drop(slot);
        storage.removed(&self.stats, old);
        Ok(())
    }

    /// Compresses `data` and copies the result (or `data` itself, when it does not compress
    /// below zsmalloc's huge class) into a new pool object; returns the object and whether it
    /// is huge. Compresses with the bio's stream `held`, borrowing it first if the bio has
    /// none yet. Allocates as C zram does: first without direct reclaim, holding the stream;
    /// failing that (counted as a write stall), the stream goes back before the allocation
    /// that may reclaim and sleep, so that other writers of this algorithm are not held up, and
    /// the page is compressed again with whichever stream comes next
    /// ([`Self::compress_again`], out of the common path).
    #[inline(always)]
    fn compress_into_object<'a>(
        &self,
        storage: &'a Storage,
        held: &mut BioStream<'a>,
        data: &[u8],
    ) -> Result<(ZsHandle<'a>, bool)> {
        let pool = storage.pages.pool();
        // A stream kept from the bio's previous page goes back first if another writer sleeps
        // for one (and is borrowed again below, as after every page before).
        held.give_back_if_wanted();
        let stream = match &mut held.0 {
            Some(stream) => stream,
            None => held.0.insert(storage.codec.streams().get()),
        };
        let (object, huge) = compress_page(stream, data, storage.huge_class_size)?;
        match pool.alloc(object.len(), mem::GFP_POOL_OBJECT_FAST) {
            Ok(handle) => self.fill_object(pool, handle, object, huge),
            Err(_) => {
                let len = object.len();
                held.give_back();
                self.stats.count(Event::WriteStall);
                let reserved = alloc_with_reclaim(pool, len)?;
                self.compress_again(storage, data, reserved)
            }
        }
    }

    /// [`Self::compress_into_object`] after the allocation that may reclaim: `reserved` was
    /// allocated for the size the page compressed to before.
    #[inline(never)]
    fn compress_again<'a>(
        &self,
        storage: &'a Storage,
        data: &[u8],
        reserved: ZsHandle<'a>,
    ) -> Result<(ZsHandle<'a>, bool)> {
        let pool = storage.pages.pool();
        let mut reserved = Some(reserved);
        let mut whole = false;
        let mut stream = storage.codec.streams().get();
        loop {
            // A page-sized reservation is for a huge page: no need to compress again (as C).
            let (object, huge) =
                if whole || reserved.as_ref().is_some_and(|r| r.size() == PAGE_SIZE) {
                    (data, true)
                } else {
                    compress_page(&mut stream, data, storage.huge_class_size)?
                };
            let handle = match reserved.take() {
                Some(handle) if handle.size() == object.len() => handle,
                Some(other) => {
                    // The page compressed to another size than before the slow allocation (a
                    // buffer changed under its write): free that object and store the page
                    // whole, a size that cannot change.
                    drop(other);
                    whole = true;
                    continue;
                }
                None => match pool.alloc(object.len(), mem::GFP_POOL_OBJECT_FAST) {
                    Ok(handle) => handle,
                    Err(_) => {
                        let len = object.len();
                        drop(stream);
                        self.stats.count(Event::WriteStall);
                        reserved = Some(alloc_with_reclaim(pool, len)?);
                        stream = storage.codec.streams().get();
                        continue;
                    }
                },
            };
            return self.fill_object(pool, handle, object, huge);
        }
    }

    /// Copies `object` into `handle` (allocated for its size) unless the pool is now above
    /// the memory limit (`ENOMEM`, the handle freed); records the pool's high-water mark.
    #[inline(always)]
    fn fill_object<'a>(
        &self,
        pool: &'a ZsPool,
        handle: ZsHandle<'a>,
        object: &[u8],
        huge: bool,
    ) -> Result<(ZsHandle<'a>, bool)> {
        let used = pool.total_pages();
        self.stats.pool_used(used);
        let limit = self.limit_pages.load(Relaxed);
        if limit != 0 && used > limit {
            // The handle is freed on return.
            return Err(ENOMEM);
        }
        handle.write(object);
        Ok((handle, huge))
    }
}

/// The compression stream of one write bio: borrowed for the bio's first page that needs one
/// and kept for its other pages until the bio ends (one borrow per bio rather than per page; a
/// writer holds it between its pages as it would through a compression), unless another
/// writer sleeps for a stream of the algorithm — then it goes back before the next page, as
/// it did after every page before, so that a long write bio never holds others up (reclaim's
/// swap-out among them) for more than a page's compression — or until something that may
/// sleep needs it given back: the allocation with reclaim, and the read of a partial page
/// write (no thread holds a stream and a decompression context together).
#[derive(Default)]
pub(super) struct BioStream<'a>(Option<StreamGuard<'a>>);

impl<'a> BioStream<'a> {
    /// Holds a stream of the storage's primary algorithm (borrowing one if the bio holds none,
    /// after giving back one another writer sleeps for).
    #[inline(always)]
    pub(super) fn hold(&mut self, storage: &'a Storage) {
        self.give_back_if_wanted();
        if self.0.is_none() {
            self.0 = Some(storage.codec.streams().get());
        }
    }

    /// The held stream's gathering buffer for a compression unit.
    pub(super) fn gathered_mut(&mut self) -> Option<&mut [u8]> {
        Some(self.0.as_mut()?.gathered_mut())
    }

    /// Gives the stream back, if the bio holds one.
    #[inline(always)]
    pub(super) fn give_back(&mut self) {
        self.0 = None;
    }

    /// Gives the stream back if another writer sleeps for one.
    #[inline(always)]
    pub(super) fn give_back_if_wanted(&mut self) {
        if self.0.as_ref().is_some_and(|stream| stream.wanted()) {
            self.0 = None;
        }
    }
}

/// Where a whole page being read goes if it comes from the backing device: its page of the
/// bio, and the storage, kept by work that completes the bio later.
pub(super) struct Chain<'a> {
    pub(super) dest: PageDest<'a>,
    pub(super) storage: ArcBorrow<'a, Storage>,
}

impl<'a> Chain<'a> {
    /// The chain of `dest` and `storage`, when both are given.
    #[inline(always)]
    fn of(dest: Option<PageDest<'a>>, storage: Option<ArcBorrow<'a, Storage>>) -> Option<Self> {
        Some(Self {
            dest: dest?,
            storage: storage?,
        })
    }
}

/// The write path's pool allocation after the one without reclaim failed: with direct reclaim
/// but no I/O; quiet on 7.3, as C 7.3's one allocation (`__GFP_NOWARN`), while on 6.12 a failure
/// warns, as C 6.12's second try.
fn alloc_with_reclaim(pool: &ZsPool, len: usize) -> Result<ZsHandle<'_>> {
    pool.alloc(len, Kernel::GFP_WRITE_RECLAIM)
}

/// Compresses `data` (a page) with `stream`; returns what to store and whether it is huge:
/// the compressed bytes, or `data` itself when they reach zsmalloc's huge class.
#[inline(always)]
fn compress_page<'s>(
    stream: &'s mut StreamGuard<'_>,
    data: &'s [u8],
    huge_class_size: usize,
) -> Result<(&'s [u8], bool)> {
    let compressed = stream.compress(data).inspect_err(|e| {
        pr_err!("Compression failed! err={}\n", e.to_errno());
    })?;
    Ok(if compressed.len() >= huge_class_size {
        (data, true)
    } else {
        (compressed, false)
    })
}
