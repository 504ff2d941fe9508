// SPDX-License-Identifier: GPL-2.0
//! A bio handed to the driver's `submit_bio`: its operation, its position, and a walk over its
//! data as pieces that never cross a memory page or a 4 KiB disk page, each mapped for exactly
//! the duration of one callback; a read's walk may instead hand over runs of whole pages that
//! one bvec holds contiguously ([`PageRun`]). Completion (`bio_endio`) happens once, in the
//! trampoline of `disk.rs`, after the driver returns.

use super::ffi;
use super::page_map::{map_local, unmap_local, MAPS_RUNS};
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::prelude::*;

/// The iterator's offset into its current bvec: `bi_bvec_done` (6.12) or `bi_offset` (7.x).
#[cfg(not(zram_rs_bvec_offset))]
fn bvec_done(iter: &mut bindings::bvec_iter) -> &mut u32 {
    &mut iter.bi_bvec_done
}

/// See above.
#[cfg(zram_rs_bvec_offset)]
fn bvec_done(iter: &mut bindings::bvec_iter) -> &mut u32 {
    &mut iter.bi_offset
}

// `bv_page + n` below is `nth_page()` only when struct pages are virtually contiguous, or
// when the kernel keeps each bvec's pages contiguous in the memmap (7.x, no `nth_page()`).
#[cfg(not(any(
    CONFIG_SPARSEMEM_VMEMMAP,
    CONFIG_FLATMEM,
    zram_rs_bvec_pages_contiguous
)))]
compile_error!("zram_rs needs CONFIG_SPARSEMEM_VMEMMAP or CONFIG_FLATMEM (multi-page bvecs)");

const PAGE_SIZE: usize = bindings::PAGE_SIZE;
const SECTOR_SHIFT: u32 = 9;

/// The operation of a bio, as far as zram cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    Discard,
    WriteZeroes,
    Other,
}

/// A bio being processed by `submit_bio`.
///
/// # Invariants
///
/// `raw` is a live bio owned by the driver until the trampoline that made this value completes
/// it; its `bi_iter` is not modified by the driver (walks use a copy).
pub(crate) struct Bio<'a> {
    raw: NonNull<bindings::bio>,
    _owned: PhantomData<&'a mut bindings::bio>,
}

/// Where a piece of a read goes in memory: its page (a page of the reader's buffer, pinned by
/// the bio's owner until the bio completes) and the bio it belongs to, so that a read of
/// another device can be chained to that bio (`bdev.rs`), which then completes only once that
/// read has. Only for the duration of the walk's callback.
pub(crate) struct PageDest<'a> {
    pub(super) parent: NonNull<bindings::bio>,
    pub(super) page: NonNull<bindings::page>,
    /// The piece is the whole page.
    pub(super) whole: bool,
    _bio: PhantomData<&'a mut bindings::bio>,
}

/// A run of whole disk pages of a read, starting at a page boundary on the disk and in memory,
/// that one bvec holds: physically contiguous pages, at contiguous addresses of the direct map
/// (`MAPS_RUNS`). Only for the duration of the walk's callback.
pub(crate) struct PageRun<'a> {
    parent: NonNull<bindings::bio>,
    first: NonNull<bindings::page>,
    bytes: &'a mut [u8],
}

impl PageRun<'_> {
    /// The run's bytes, its pages one after another.
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        self.bytes
    }

    /// The run's page `i` (from 0): its bytes and where they are (for a read of another device
    /// chained to the bio, as a piece's); `None` past the run.
    pub(crate) fn page(&mut self, i: usize) -> Option<(&mut [u8], PageDest<'_>)> {
        let start = i.checked_mul(PAGE_SIZE)?;
        let bytes = self.bytes.get_mut(start..start.checked_add(PAGE_SIZE)?)?;
        // SAFETY: page `i` of the run is a page of its bvec (it has `i` whole pages before it),
        // whose struct pages are contiguous (the config check above).
        let page = unsafe { NonNull::new_unchecked(self.first.as_ptr().add(i)) };
        let dest = PageDest {
            parent: self.parent,
            page,
            whole: true,
            _bio: PhantomData,
        };
        Some((bytes, dest))
    }
}

/// One piece of a bio's data: where it goes on the disk and how long it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece {
    /// Index of the disk page (kernel pages, as zram's slots).
    pub(crate) index: usize,
    /// Byte offset inside that disk page.
    pub(crate) offset: usize,
    /// Length in bytes; `offset + len <= PAGE_SIZE`.
    pub(crate) len: usize,
}

impl Bio<'_> {
    /// Wraps a bio submitted to one of the driver's disks.
    ///
    /// # Safety
    ///
    /// `raw` is a live bio that stays owned by the caller, who completes it after the returned
    /// value is gone.
    pub(crate) unsafe fn from_raw(raw: NonNull<bindings::bio>) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            raw,
            _owned: PhantomData,
        }
    }

    fn raw(&self) -> &bindings::bio {
        // SAFETY: the bio is live (type invariant) and the driver does not change it.
        unsafe { self.raw.as_ref() }
    }

    /// The operation.
    pub(crate) fn op(&self) -> Op {
        match self.raw().bi_opf & ffi::REQ_OP_MASK {
            bindings::req_op_REQ_OP_READ => Op::Read,
            bindings::req_op_REQ_OP_WRITE => Op::Write,
            bindings::req_op_REQ_OP_DISCARD => Op::Discard,
            bindings::req_op_REQ_OP_WRITE_ZEROES => Op::WriteZeroes,
            _ => Op::Other,
        }
    }

    /// First byte on the disk.
    pub(crate) fn start_byte(&self) -> u64 {
        self.raw().bi_iter.bi_sector << SECTOR_SHIFT
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> u64 {
        u64::from(self.raw().bi_iter.bi_size)
    }

    /// Walks the data of a write: `f` gets each piece and its bytes.
    pub(crate) fn for_each_piece_in(&self, mut f: impl FnMut(Piece, &[u8]) -> Result) -> Result {
        self.walk::<false>(no_runs, no_run, |piece, ptr, _| {
            // SAFETY: `walk` passes a mapping of `piece.len` bytes valid during this call. A
            // write's pages may be shared (the zero page of a zeroout, say) and are only read:
            // a shared slice. One exception is accepted, as everywhere in the block layer: an
            // O_DIRECT write's pages are user memory that another thread may change while the
            // bio is in flight; the driver then stores some version of the bytes and never
            // relies on two reads of them agreeing (see `Zram::compress_into_object`).
            f(piece, unsafe {
                core::slice::from_raw_parts(ptr, piece.len)
            })
        })
    }

    /// Walks the buffers of a read: `f` gets each piece, the bytes to fill, and where they are
    /// (for a read of another device chained to this bio, [`PageDest`]).
    pub(crate) fn for_each_piece_out(
        &mut self,
        f: impl FnMut(Piece, &mut [u8], PageDest<'_>) -> Result,
    ) -> Result {
        self.for_each_piece_or_run_out(no_runs, no_run, f)
    }

    /// [`Self::for_each_piece_out`], but where `run_pages(index)` asks for a run of more than
    /// one page from disk page `index` (where a piece would start at a page boundary on the
    /// disk and in memory) and the current bvec holds that many whole pages contiguously in
    /// the direct map, `run(index, run)` gets them at once ([`PageRun`]) instead of `f` page by
    /// page.
    pub(crate) fn for_each_piece_or_run_out(
        &mut self,
        run_pages: impl FnMut(usize) -> usize,
        run: impl FnMut(usize, PageRun<'_>) -> Result,
        mut f: impl FnMut(Piece, &mut [u8], PageDest<'_>) -> Result,
    ) -> Result {
        let parent = self.raw;
        self.walk::<true>(run_pages, run, |piece, ptr, page| {
            let dest = PageDest {
                parent,
                page,
                whole: piece.len == PAGE_SIZE,
                _bio: PhantomData,
            };
            // SAFETY: `walk` passes a mapping of `piece.len` bytes valid during this call; a
            // read's buffer is the reader's alone until the bio completes, but for the accepted
            // exception of an O_DIRECT read into user memory that another thread touches
            // meanwhile (its bytes are then undefined to that thread, as with C drivers); the
            // driver only writes the slice.
            let out = unsafe { core::slice::from_raw_parts_mut(ptr, piece.len) };
            f(piece, out, dest)
        })
    }

    /// The walk behind both directions. Pieces split at bvec ends, at memory page boundaries
    /// and at disk page boundaries. After a piece of a read (`READ`), the data cache is
    /// flushed for the page written to, where the architecture needs it (as C zram).
    /// `f` gets each piece with a pointer to its `piece.len` bytes, mapped for that call only,
    /// and the memory page they are in. A read's runs: see [`Self::for_each_piece_or_run_out`].
    fn walk<const READ: bool>(
        &self,
        mut run_pages: impl FnMut(usize) -> usize,
        mut run: impl FnMut(usize, PageRun<'_>) -> Result,
        mut f: impl FnMut(Piece, *mut u8, NonNull<bindings::page>) -> Result,
    ) -> Result {
        let bio = self.raw();
        let mut iter = bio.bi_iter;
        let mut disk_byte = iter.bi_sector << SECTOR_SHIFT;
        while iter.bi_size > 0 {
            // SAFETY: while `bi_size > 0`, `bi_idx` indexes a valid bvec of this live bio.
            let bvec = unsafe { &*bio.bi_io_vec.add(iter.bi_idx as usize) };
            let in_bvec = *bvec_done(&mut iter) as usize;
            let mem_byte = bvec.bv_offset as usize + in_bvec;
            let mem_offset = mem_byte % PAGE_SIZE;
            let piece = Piece {
                index: (disk_byte / PAGE_SIZE as u64) as usize,
                offset: (disk_byte % PAGE_SIZE as u64) as usize,
                len: 0,
            };
            // `in_bvec < bv_len` (a bvec_iter invariant).
            let in_this_bvec = (bvec.bv_len as usize).wrapping_sub(in_bvec);
            let run_len = if READ && MAPS_RUNS && mem_offset == 0 && piece.offset == 0 {
                run_pages(piece.index).saturating_mul(PAGE_SIZE)
            } else {
                0
            };
            let len = if run_len > PAGE_SIZE
                && run_len <= in_this_bvec
                && run_len <= iter.bi_size as usize
            {
                // SAFETY: as for a piece's page below; `mem_offset` is 0.
                let first = unsafe { bvec.bv_page.add(mem_byte / PAGE_SIZE) };
                // SAFETY: `first` is a page of the bio's buffer, pinned by the bio's owner for
                // the bio's life; its mapping is its direct-map address (`MAPS_RUNS`).
                let base = unsafe { map_local(first) };
                // SAFETY: the bvec holds `run_len` bytes from `first`'s start: physically
                // contiguous pages, at contiguous direct-map addresses (`MAPS_RUNS`), the
                // reader's alone until the bio completes (see `for_each_piece_out`); the slice
                // lives for this call only, before the mapping is released below.
                let bytes = unsafe { core::slice::from_raw_parts_mut(base, run_len) };
                // SAFETY: a bvec's page is never NULL.
                let first = unsafe { NonNull::new_unchecked(first) };
                let result = run(
                    piece.index,
                    PageRun {
                        parent: self.raw,
                        first,
                        bytes,
                    },
                );
                // SAFETY: `base` is this thread's most recent local mapping, released once.
                unsafe { unmap_local(base) };
                for i in 0..run_len / PAGE_SIZE {
                    // SAFETY: page `i` of the run is live (above).
                    unsafe { super::mem::flush_dcache_page(first.as_ptr().add(i)) };
                }
                result?;
                run_len
            } else {
                let len = in_this_bvec
                    .min(PAGE_SIZE - mem_offset)
                    .min(PAGE_SIZE - piece.offset)
                    .min(iter.bi_size as usize);
                self.piece::<READ>(Piece { len, ..piece }, bvec, mem_byte, &mut f)?;
                len
            };
            // No overflow: `len` is at most what is left of the bio and of the bvec, and a bio's
            // sectors, bvec count and sizes fit their types.
            disk_byte = disk_byte.wrapping_add(len as u64);
            iter.bi_size = iter.bi_size.wrapping_sub(len as u32);
            let done = bvec_done(&mut iter);
            *done = done.wrapping_add(len as u32);
            if *done == bvec.bv_len {
                *done = 0;
                iter.bi_idx = iter.bi_idx.wrapping_add(1);
            }
        }
        Ok(())
    }

    /// One piece of [`Self::walk`]: `piece.len` bytes from byte `mem_byte` of `bvec` (where
    /// `(mem_byte % PAGE_SIZE) + piece.len <= PAGE_SIZE`), mapped for `f`.
    #[inline(always)]
    fn piece<const READ: bool>(
        &self,
        piece: Piece,
        bvec: &bindings::bio_vec,
        mem_byte: usize,
        f: &mut impl FnMut(Piece, *mut u8, NonNull<bindings::page>) -> Result,
    ) -> Result {
        // SAFETY: a bvec's pages are virtually contiguous struct pages (`nth_page()`, see the
        // config check above) and `mem_byte` lies inside the bvec.
        let page = unsafe { bvec.bv_page.add(mem_byte / PAGE_SIZE) };
        // SAFETY: `page` is a page of the bio's buffer, pinned by the bio's owner for the
        // bio's life.
        let base = unsafe { map_local(page) };
        // SAFETY: the mapping covers the whole page and `mem_byte % PAGE_SIZE + len <=
        // PAGE_SIZE`; `f` uses the bytes only until it returns, before the mapping is released
        // below.
        let bytes = unsafe { base.add(mem_byte % PAGE_SIZE) };
        // SAFETY: a bvec's page is never NULL (above).
        let result = f(piece, bytes, unsafe { NonNull::new_unchecked(page) });
        // SAFETY: `base` is this thread's most recent local mapping, released once.
        unsafe { unmap_local(base) };
        if READ {
            // SAFETY: `page` is live (above).
            unsafe { super::mem::flush_dcache_page(page) };
        }
        result
    }
}

/// No runs: for the walks that take pieces only.
fn no_runs(_index: usize) -> usize {
    0
}

/// The run callback of the walks that take pieces only (never called: [`no_runs`]).
fn no_run(_index: usize, _run: PageRun<'_>) -> Result {
    Err(EIO)
}

/// Calls `f` with the bytes of `page`, mapped for the call, and then flushes the data cache
/// for the page (written to here, read by its owner).
///
/// # Safety
///
/// `page` is a live page that nothing else reads or writes during the call.
pub(super) unsafe fn with_page_bytes<R>(
    page: NonNull<bindings::page>,
    f: impl FnOnce(&mut [u8]) -> R,
) -> R {
    // SAFETY: `page` is live (the caller's promise).
    let base = unsafe { map_local(page.as_ptr()) };
    // SAFETY: the mapping covers the whole page, which only this call uses (the caller's
    // promise), until the mapping is released below.
    let bytes = unsafe { core::slice::from_raw_parts_mut(base, PAGE_SIZE) };
    let result = f(bytes);
    // SAFETY: `base` is this thread's most recent local mapping, released once.
    unsafe { unmap_local(base) };
    // SAFETY: `page` is live (above).
    unsafe { super::mem::flush_dcache_page(page.as_ptr()) };
    result
}
