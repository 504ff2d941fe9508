// SPDX-License-Identifier: GPL-2.0
//! A decompression context ([`Reader`]): what a backend needs to decompress (zstd's `dctx`,
//! deflate's inflate stream, lz4's dictionary; nothing for lzo and 842) and, on the kernels that
//! need one, a page of scratch where zsmalloc may copy an object that spans two pages (7.x) and
//! where a page written back compressed is decompressed (7.3). A device's algorithm has as
//! many of these as compression streams, in a pool of their own (`codec.rs`): readers borrow
//! only these, so a read waits at most for another read's decompression of one page, never for
//! a compression.

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

/// One decompression context and its scratch page.
pub(crate) struct Reader {
    context: ReadContext,
    scratch: VVec<u8>,
}

impl Reader {
    /// A decompression context for `algorithm` with `params`, sharing what it may with the
    /// device's first compression stream `first` of that algorithm.
    pub(super) fn new(algorithm: Algorithm, params: &Params, first: &Stream) -> Result<Self> {
        Ok(Self {
            context: ReadContext::new(algorithm, params, first.context())?,
            scratch: mem::vzalloc(SCRATCH)?,
        })
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
