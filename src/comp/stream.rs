// SPDX-License-Identifier: GPL-2.0
//! A compression stream ([`Stream`]): one backend compression context and a two-page output
//! buffer (room for data that grows when compressed). Streams only compress: reads decompress
//! with their own contexts (`reader.rs`), so that no read waits for a compression.

use super::{Algorithm, Context, Params, PAGE_SIZE};
use crate::kapi::mem;
use kernel::alloc::VVec;
use kernel::prelude::*;

/// One compression stream: a backend's compression context and a two-page output buffer.
pub(crate) struct Stream {
    context: Context,
    buffer: VVec<u8>,
}

impl Stream {
    /// A stream for `algorithm` with `params`, like `first` (another stream of the same
    /// algorithm and parameters, whose shared state it shares) if given.
    pub(crate) fn new(
        algorithm: Algorithm,
        params: Params,
        first: Option<&Stream>,
    ) -> Result<Self> {
        let context = Context::new(algorithm, params, first.map(|first| &first.context))?;
        Ok(Self {
            context,
            buffer: mem::vzalloc(2 * PAGE_SIZE)?,
        })
    }

    /// The stream's backend context, which a decompression context of the same device and
    /// algorithm may share state with (zstd's digested dictionary).
    pub(super) fn context(&self) -> &Context {
        &self.context
    }

    /// Compresses `src` (one page); returns the compressed bytes, in the stream's buffer.
    #[inline(always)]
    pub(crate) fn compress(&mut self, src: &[u8]) -> Result<&[u8]> {
        let len = self.context.compress(src, &mut self.buffer)?;
        self.buffer.get(..len).ok_or(EINVAL)
    }
}
