// SPDX-License-Identifier: GPL-2.0
//! lz4: LZ4 with the level as its acceleration factor, 1 by default (C's `backend_lz4.c`,
//! without dictionaries). Decompresses without a stream.

use super::{backend_built, Backend, Decompressor, Params};
use crate::kapi::lz4;
use kernel::prelude::*;

/// `lz4`.
pub(crate) struct Lz4;

impl Backend for Lz4 {
    const NAME: &'static str = "lz4";
    const AVAILABLE: bool = backend_built!(
        CONFIG_ZRAM_BACKEND_LZ4,
        CONFIG_LZ4_COMPRESS,
        CONFIG_LZ4_DECOMPRESS
    );
    type Context = lz4::Compressor;
    const DECOMPRESSOR: Decompressor<lz4::Compressor> = Decompressor::Stateless(lz4::decompress);

    fn default_level() -> i32 {
        lz4::ACCELERATION_DEFAULT
    }

    fn check(params: Params) -> Result {
        super::check_level(Self::NAME, params, lz4::ACCELERATION_DEFAULT..=i32::MAX)
    }

    fn create(params: Params) -> Result<lz4::Compressor> {
        lz4::Compressor::new(params.level)
    }

    fn compress(context: &mut lz4::Compressor, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        context.compress(src, dst)
    }
}
