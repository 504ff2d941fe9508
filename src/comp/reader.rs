// SPDX-License-Identifier: GPL-2.0
//! A decompression context ([`Reader`]): what a backend needs to decompress (zstd's `dctx`,
//! deflate's inflate stream, lz4's dictionary; nothing for lzo and 842) and, on the kernels that
//! need one, a page of scratch where zsmalloc may copy an object that spans two pages (7.x) and
//! where a page written back compressed is decompressed (7.3), and on a device with compression
//! units two buffers of a unit: where a unit's pieces are gathered and where it is decompressed,
//! with the serial number of the unit object it holds, so that the unit's other pages read
//! from it without another decompression. A device's algorithm has as many of these as
//! compression streams, in a pool of their own (`codec.rs`): readers borrow only these, so a
//! read waits at most for another read's decompression of one page or unit, never for a
//! compression.

use super::{Algorithm, Params, ReadContext, Stream, PAGE_SIZE};
use crate::abi::Abi;
use crate::kapi::mem;
use crate::kapi::zspool::ZsPool;
use crate::Kernel;
use kernel::alloc::VVec;
use kernel::prelude::*;

/// The scratch a reader needs: a page where zsmalloc may copy an object to be read
/// ([`ZsPool::READS_NEED_SCRATCH`]) or where a page written back compressed is decompressed
/// ([`Abi::COMPRESSED_WRITEBACK`]); none on a kernel with neither (6.12).
const SCRATCH: usize = if ZsPool::READS_NEED_SCRATCH || Kernel::COMPRESSED_WRITEBACK {
    PAGE_SIZE
} else {
    0
};

/// One decompression context, its scratch page and its unit buffers.
pub(crate) struct Reader {
    context: ReadContext,
    scratch: VVec<u8>,
    /// A unit's compressed bytes, gathered from its pieces (empty when units are pages).
    unit_in: VVec<u8>,
    /// A decompressed unit (empty when units are pages).
    unit_out: VVec<u8>,
    /// The serial number of the unit object `unit_out` holds, 0 for none.
    unit_serial: u64,
}

/// A reader's parts for reading a unit's page, borrowed apart.
pub(crate) struct UnitBuffers<'a> {
    /// The scratch page (see [`Reader::scratch_and_decompressor`]).
    pub(crate) scratch: &'a mut [u8],
    /// Where the unit's pieces are gathered.
    pub(crate) unit_in: &'a mut [u8],
    /// Where the unit is decompressed.
    pub(crate) unit_out: &'a mut [u8],
    /// The serial number of the unit object `unit_out` holds, 0 for none: the caller sets it.
    pub(crate) serial: &'a mut u64,
    /// The decompressor.
    pub(crate) decompressor: ReaderDecompressor<'a>,
}

impl Reader {
    /// A decompression context for `algorithm` with `params`, sharing what it may with the
    /// device's first compression stream `first` of that algorithm; with unit buffers of
    /// `params.src_size` bytes where that is more than a page.
    pub(super) fn new(algorithm: Algorithm, params: &Params, first: &Stream) -> Result<Self> {
        let unit = if params.src_size > PAGE_SIZE {
            params.src_size
        } else {
            0
        };
        Ok(Self {
            context: ReadContext::new(algorithm, params, first.context())?,
            scratch: mem::vzalloc(SCRATCH)?,
            unit_in: mem::vzalloc(unit)?,
            unit_out: mem::vzalloc(unit)?,
            unit_serial: 0,
        })
    }

    /// The parts that read a unit's page.
    pub(crate) fn unit_buffers(&mut self) -> UnitBuffers<'_> {
        UnitBuffers {
            scratch: &mut self.scratch,
            unit_in: &mut self.unit_in,
            unit_out: &mut self.unit_out,
            serial: &mut self.unit_serial,
            decompressor: ReaderDecompressor {
                context: &mut self.context,
            },
        }
    }

    /// The scratch page (`PAGE_SIZE` bytes, or none where the kernel needs none) and the
    /// decompressor, borrowed apart: zsmalloc may copy the object to be read into the scratch
    /// page (as C zram lends its stream's `local_copy`).
    pub(crate) fn scratch_and_decompressor(&mut self) -> (&mut [u8], ReaderDecompressor<'_>) {
        (
            &mut self.scratch,
            ReaderDecompressor {
                context: &mut self.context,
            },
        )
    }
}

/// A reader's decompressor, borrowed apart from its scratch page.
pub(crate) struct ReaderDecompressor<'a> {
    context: &'a mut ReadContext,
}

impl ReaderDecompressor<'_> {
    /// Decompresses `src` into `dst`, which the result must fill exactly: `EIO` otherwise and
    /// when `src` is not valid data. Inline, so that the one comparison of the length
    /// decompressed is the caller's and the out-of-line part ends in a jump to the backend's
    /// function.
    #[inline(always)]
    pub(crate) fn decompress_into(self, dst: &mut [u8], src: &[u8]) -> Result {
        let len = dst.len();
        if self.decompressed_len(dst, src) != len {
            return Err(EIO);
        }
        Ok(())
    }

    /// Decompresses `src` into `dst`; returns the length decompressed, or for a failure a value
    /// no slice's length equals. Takes the borrow by value, so the context's address is the
    /// argument itself, and the destination first, as the libraries' functions do, so that the
    /// arguments reach them without moves.
    #[inline(never)]
    fn decompressed_len(self, dst: &mut [u8], src: &[u8]) -> usize {
        self.context.decompressed_len(dst, src)
    }
}
