// SPDX-License-Identifier: GPL-2.0
//! zstd at a level, the library's default level by default, with the parameters the library
//! chooses for one page, with or without a dictionary (C's `backend_zstd.c`). A stream holds a
//! compression and a decompression context, so readers need a stream.

use super::{Backend, Decompressor, Params};
use crate::kapi::zstd;
use kernel::prelude::*;

/// `zstd`.
pub(crate) struct Zstd;

/// A stream's zstd contexts, with or without a dictionary.
pub(crate) enum ZstdContext {
    /// Without a dictionary: contexts in workspaces sized for one page.
    Plain(zstd::CompressContext, zstd::DecompressContext),
    /// With a dictionary, digested once for all the device's streams.
    Dict(zstd::DictContext),
}

/// Decompresses with the stream's decompression context.
fn decompress(context: &mut ZstdContext, src: &[u8], dst: &mut [u8]) -> Result {
    match context {
        ZstdContext::Plain(_, decompress) => decompress.decompress(src, dst),
        ZstdContext::Dict(context) => context.decompress(src, dst),
    }
}

impl Backend for Zstd {
    const NAME: &'static str = "zstd";
    const C_DEFAULT: bool = cfg!(CONFIG_ZRAM_DEF_COMP_ZSTD);
    type Context = ZstdContext;
    const DECOMPRESSOR: Decompressor<ZstdContext> = Decompressor {
        stateless: None,
        with_context: Some(decompress),
    };

    fn default_level() -> i32 {
        zstd::default_level()
    }

    fn check(params: &Params) -> Result {
        super::check_level(Self::NAME, params, zstd::levels())
    }

    fn create(params: Params) -> Result<ZstdContext> {
        Ok(match params.dict {
            None => ZstdContext::Plain(
                zstd::CompressContext::new(params.level, kernel::page::PAGE_SIZE as u64)?,
                zstd::DecompressContext::new()?,
            ),
            Some(dict) => ZstdContext::Dict(zstd::DictContext::new(zstd::DigestedDict::new(
                params.level,
                dict,
            )?)?),
        })
    }

    fn create_like(first: &ZstdContext, params: Params) -> Result<ZstdContext> {
        match first {
            ZstdContext::Dict(context) => Ok(ZstdContext::Dict(zstd::DictContext::new(
                context.dict().clone(),
            )?)),
            ZstdContext::Plain(..) => Self::create(params),
        }
    }

    fn compress(context: &mut ZstdContext, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        match context {
            ZstdContext::Plain(compress, _) => compress.compress(src, dst),
            ZstdContext::Dict(context) => context.compress(src, dst),
        }
    }
}
