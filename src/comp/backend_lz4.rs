// SPDX-License-Identifier: GPL-2.0
//! lz4: LZ4 with the level as its acceleration factor, 1 by default, with or without a
//! dictionary (C's `backend_lz4.c`). Decompresses without a context unless there is a
//! dictionary.

use super::{Backend, Decompressor, Params};
use crate::abi::Abi;
use crate::kapi::lz4;
use crate::Kernel;
use kernel::prelude::*;

/// `lz4`.
pub(crate) struct Lz4;

/// A stream's LZ4 state: work memory, or with a dictionary a compression stream primed with it.
pub(crate) enum Lz4Context {
    /// Without a dictionary.
    Plain(lz4::Compressor),
    /// With a dictionary.
    Dict(lz4::DictCompressor),
}

impl Backend for Lz4 {
    const NAME: &'static str = "lz4";
    const C_DEFAULT: bool = cfg!(CONFIG_ZRAM_DEF_COMP_LZ4);
    type Context = Lz4Context;
    type ReadContext = lz4::Reader;
    const DECOMPRESSOR: Decompressor<lz4::Reader> = Decompressor {
        stateless: Some(lz4::decompress),
        with_context: Some(super::lz4_decompress),
    };

    fn default_level() -> i32 {
        lz4::ACCELERATION_DEFAULT
    }

    fn check(params: &Params) -> Result {
        super::check_level(Self::NAME, params, lz4::ACCELERATION_DEFAULT..=i32::MAX)
    }

    fn create(params: Params) -> Result<Lz4Context> {
        let Some(dict) = params.dict else {
            return Ok(Lz4Context::Plain(lz4::Compressor::new(params.level)?));
        };
        let mut compressor = lz4::DictCompressor::new(params.level, dict)?;
        // Where the kernel's ABI says so (7.x), the dictionary is loaded when the device is
        // initialised, which fails if the library does not take it whole; else it is loaded
        // for each page, whose writes then fail.
        if Kernel::LZ4_DICT_LOADED_AT_INIT && !compressor.load()? {
            return Err(EINVAL);
        }
        Ok(Lz4Context::Dict(compressor))
    }

    fn create_reader(_first: &Self::Context, params: &Params) -> Result<lz4::Reader> {
        lz4::Reader::new(params.dict.clone())
    }

    fn compress(context: &mut Lz4Context, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        match context {
            Lz4Context::Plain(compressor) => compressor.compress(src, dst),
            Lz4Context::Dict(compressor) => compressor.compress(src, dst),
        }
    }
}
