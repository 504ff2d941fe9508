// SPDX-License-Identifier: GPL-2.0
//! lz4hc: LZ4HC at a level, 9 by default (C's `backend_lz4hc.c`, without dictionaries). Its
//! output is LZ4's, so it decompresses with LZ4's decoder, without a stream.

use super::{backend_built, Backend, Decompressor, Params};
use crate::kapi::lz4;
use kernel::prelude::*;

/// `lz4hc`.
pub(crate) struct Lz4hc;

impl Backend for Lz4hc {
    const NAME: &'static str = "lz4hc";
    const AVAILABLE: bool = backend_built!(
        CONFIG_ZRAM_BACKEND_LZ4HC,
        CONFIG_LZ4HC_COMPRESS,
        CONFIG_LZ4_DECOMPRESS
    );
    type Context = lz4::HcCompressor;
    const DECOMPRESSOR: Decompressor<lz4::HcCompressor> = Decompressor::Stateless(lz4::decompress);

    fn default_level() -> i32 {
        lz4::HC_DEFAULT_CLEVEL
    }

    fn check(params: Params) -> Result {
        super::check_level(Self::NAME, params, 1..=lz4::HC_MAX_CLEVEL)
    }

    fn create(params: Params) -> Result<lz4::HcCompressor> {
        lz4::HcCompressor::new(params.level)
    }

    fn compress(context: &mut lz4::HcCompressor, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        context.compress(src, dst)
    }
}
