// SPDX-License-Identifier: GPL-2.0
//! zstd at a level, the library's default level by default, with the parameters the library
//! chooses for what a stream compresses at once (a page, or a compression unit; a page with a
//! dictionary), with or without a dictionary (C's `backend_zstd.c`). A stream holds a
//! library compression context, a decompression context (a reader's) a library decompression
//! context, both with the device's digested dictionary when it has one.

use super::{Backend, Decompressor, Params};
use crate::kapi::zstd;
use kernel::prelude::*;

/// `zstd`.
pub(crate) struct Zstd;

/// A stream's zstd compression context, with or without a dictionary.
pub(crate) enum ZstdContext {
    /// Without a dictionary: a context in a workspace sized for one page or unit.
    Plain(zstd::CompressContext),
    /// With a dictionary, digested once for all the device's streams and decompression
    /// contexts.
    Dict(zstd::DictCompressContext),
}

/// Decompresses with a decompression context's zstd context, which holds the device's
/// digested dictionary when its streams have one; returns the library's result, a length or
/// an error value no slice's length equals.
fn decompress(context: &mut zstd::DecompressContext, src: &[u8], dst: &mut [u8]) -> usize {
    context.decompress(src, dst)
}

impl Backend for Zstd {
    const NAME: &'static str = "zstd";
    const C_DEFAULT: bool = cfg!(CONFIG_ZRAM_DEF_COMP_ZSTD);
    type Context = ZstdContext;
    type ReadContext = zstd::DecompressContext;
    const DECOMPRESSOR: Decompressor<zstd::DecompressContext> = Decompressor {
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
            None => ZstdContext::Plain(zstd::CompressContext::new(
                params.level,
                params.src_size as u64,
            )?),
            Some(dict) => ZstdContext::Dict(zstd::DictCompressContext::new(
                zstd::DigestedDict::new(params.level, dict)?,
            )?),
        })
    }

    fn create_like(first: &ZstdContext, params: Params) -> Result<ZstdContext> {
        match first {
            ZstdContext::Dict(context) => Ok(ZstdContext::Dict(zstd::DictCompressContext::new(
                context.dict().clone(),
            )?)),
            ZstdContext::Plain(..) => Self::create(params),
        }
    }

    fn create_reader(first: &ZstdContext, _params: &Params) -> Result<zstd::DecompressContext> {
        match first {
            ZstdContext::Plain(_) => zstd::DecompressContext::new(),
            ZstdContext::Dict(context) => {
                zstd::DecompressContext::with_dict(context.dict().clone())
            }
        }
    }

    fn compress(context: &mut ZstdContext, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        match context {
            ZstdContext::Plain(compress) => compress.compress(src, dst),
            ZstdContext::Dict(context) => context.compress(src, dst),
        }
    }
}
