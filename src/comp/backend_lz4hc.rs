// SPDX-License-Identifier: GPL-2.0
//! lz4hc: LZ4HC at a level, 9 by default, with or without a dictionary (C's
//! `backend_lz4hc.c`). Its output is LZ4's, so it decompresses with LZ4's decoder, without a
//! context unless there is a dictionary.

use super::{Backend, Decompressor, Params};
use crate::kapi::lz4;
use kernel::prelude::*;

/// `lz4hc`.
pub(crate) struct Lz4hc;

/// A stream's LZ4HC state: work memory, or with a dictionary a compression stream primed with
/// it.
pub(crate) enum Lz4hcContext {
    /// Without a dictionary.
    Plain(lz4::HcCompressor),
    /// With a dictionary.
    Dict(lz4::DictHcCompressor),
}

impl Backend for Lz4hc {
    const NAME: &'static str = "lz4hc";
    const C_DEFAULT: bool = cfg!(CONFIG_ZRAM_DEF_COMP_LZ4HC);
    type Context = Lz4hcContext;
    type ReadContext = lz4::Reader;
    const DECOMPRESSOR: Decompressor<lz4::Reader> = Decompressor {
        stateless: Some(lz4::decompress),
        with_context: Some(super::lz4_decompress),
    };

    fn default_level() -> i32 {
        lz4::HC_DEFAULT_CLEVEL
    }

    fn check(params: &Params) -> Result {
        super::check_level(Self::NAME, params, 1..=lz4::HC_MAX_CLEVEL)
    }

    fn create(params: Params) -> Result<Lz4hcContext> {
        Ok(match params.dict {
            None => Lz4hcContext::Plain(lz4::HcCompressor::new(params.level)?),
            Some(dict) => Lz4hcContext::Dict(lz4::DictHcCompressor::new(params.level, dict)?),
        })
    }

    fn create_reader(_first: &Self::Context, params: &Params) -> Result<lz4::Reader> {
        lz4::Reader::new(params.dict.clone())
    }

    fn compress(context: &mut Lz4hcContext, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        match context {
            Lz4hcContext::Plain(compressor) => compressor.compress(src, dst),
            Lz4hcContext::Dict(compressor) => compressor.compress(src, dst),
        }
    }
}
