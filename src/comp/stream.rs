// SPDX-License-Identifier: GPL-2.0
//! A compression stream ([`Stream`]): one backend compression context and an output buffer of
//! twice what it compresses at once (room for data that grows when compressed), and on a
//! device with compression units a buffer where a write gathers a unit's pages to compress
//! them as one. Streams only compress: reads decompress with their own contexts
//! (`reader.rs`), so that no read waits for a compression.

use super::{Algorithm, Context, Params, PAGE_SIZE};
use crate::kapi::mem;
use kernel::alloc::VVec;
use kernel::prelude::*;

/// One compression stream: a backend's compression context, an output buffer of twice the
/// unit, and the unit's gathering buffer (empty when units are pages).
pub(crate) struct Stream {
    context: Context,
    buffer: VVec<u8>,
    gathered: VVec<u8>,
}

impl Stream {
    /// A stream for `algorithm` with `params`, like `first` (another stream of the same
    /// algorithm and parameters, whose shared state it shares) if given. `params.src_size` is
    /// the unit: a page, or several.
    pub(crate) fn new(
        algorithm: Algorithm,
        params: Params,
        first: Option<&Stream>,
    ) -> Result<Self> {
        let unit = params.src_size.max(PAGE_SIZE);
        let context = Context::new(algorithm, params, first.map(|first| &first.context))?;
        Ok(Self {
            context,
            buffer: mem::vzalloc(2 * unit)?,
            gathered: mem::vzalloc(if unit > PAGE_SIZE { unit } else { 0 })?,
        })
    }

    /// The buffer where a write gathers a unit's pages (empty when units are pages).
    pub(crate) fn gathered_mut(&mut self) -> &mut [u8] {
        &mut self.gathered
    }

    /// The gathered unit.
    pub(crate) fn gathered(&self) -> &[u8] {
        &self.gathered
    }

    /// Compresses the gathered unit; returns the compressed bytes, in the stream's buffer.
    pub(crate) fn compress_gathered(&mut self) -> Result<&[u8]> {
        let len = self.context.compress(&self.gathered, &mut self.buffer)?;
        self.buffer.get(..len).ok_or(EINVAL)
    }

    /// The stream's backend context, which a decompression context of the same device and
    /// algorithm may share state with (zstd's digested dictionary).
    pub(super) fn context(&self) -> &Context {
        &self.context
    }

    /// Compresses `src` (one page, or a unit); returns the compressed bytes, in the stream's
    /// buffer.
    #[inline(always)]
    pub(crate) fn compress(&mut self, src: &[u8]) -> Result<&[u8]> {
        let len = self.context.compress(src, &mut self.buffer)?;
        self.buffer.get(..len).ok_or(EINVAL)
    }
}
