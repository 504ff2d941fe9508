// SPDX-License-Identifier: GPL-2.0
//! zstd at a level, the library's default level by default, with the parameters the library
//! chooses for one page (C's `backend_zstd.c`, without dictionaries). A stream holds a
//! compression and a decompression context, so readers need a stream.

use super::{backend_built, Backend, Decompressor, Params};
use crate::kapi::zstd;
use kernel::prelude::*;

/// `zstd`.
pub(crate) struct Zstd;

/// A stream's zstd contexts.
pub(crate) struct ZstdContext {
    compress: zstd::CompressContext,
    decompress: zstd::DecompressContext,
}

/// Decompresses with the stream's decompression context.
fn decompress(context: &mut ZstdContext, src: &[u8], dst: &mut [u8]) -> Result {
    context.decompress.decompress(src, dst)
}

impl Backend for Zstd {
    const NAME: &'static str = "zstd";
    const AVAILABLE: bool = backend_built!(
        CONFIG_ZRAM_BACKEND_ZSTD,
        CONFIG_ZSTD_COMPRESS,
        CONFIG_ZSTD_DECOMPRESS
    );
    type Context = ZstdContext;
    const DECOMPRESSOR: Decompressor<ZstdContext> = Decompressor::WithContext(decompress);

    fn default_level() -> i32 {
        zstd::default_level()
    }

    fn check(params: Params) -> Result {
        super::check_level(Self::NAME, params, zstd::levels())
    }

    fn create(params: Params) -> Result<ZstdContext> {
        Ok(ZstdContext {
            compress: zstd::CompressContext::new(params.level, kernel::page::PAGE_SIZE as u64)?,
            decompress: zstd::DecompressContext::new()?,
        })
    }

    fn compress(context: &mut ZstdContext, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        context.compress.compress(src, dst)
    }
}
