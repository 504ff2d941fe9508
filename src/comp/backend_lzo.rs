// SPDX-License-Identifier: GPL-2.0
//! lzo-rle and lzo: LZO1X-1 with and without runs of zeroes encoded (C's `backend_lzorle.c` and
//! `backend_lzo.c`), one backend type for both. Both decompress with the same decoder, without
//! a context. No levels.

use super::{Backend, Decompressor, Params};
use crate::kapi::lzo;
use kernel::prelude::*;

/// `lzo-rle`.
pub(crate) type LzoRle = Lzo1x<true>;
/// `lzo`.
pub(crate) type Lzo = Lzo1x<false>;

/// LZO1X-1, with runs of zeroes encoded when `RLE`.
pub(crate) struct Lzo1x<const RLE: bool>;

impl<const RLE: bool> Backend for Lzo1x<RLE> {
    const NAME: &'static str = if RLE { "lzo-rle" } else { "lzo" };
    const C_DEFAULT: bool =
        (RLE && cfg!(CONFIG_ZRAM_DEF_COMP_LZORLE)) || (!RLE && cfg!(CONFIG_ZRAM_DEF_COMP_LZO));
    type Context = lzo::WorkMem;
    type ReadContext = ();
    const DECOMPRESSOR: Decompressor<()> = Decompressor {
        stateless: Some(lzo::decompress),
        with_context: None,
    };

    fn check(params: &Params) -> Result {
        super::check_no_dict(Self::NAME, params)?;
        super::check_no_level(Self::NAME, params)
    }

    fn create(_params: Params) -> Result<lzo::WorkMem> {
        lzo::WorkMem::new()
    }

    fn create_reader(_first: &lzo::WorkMem, _params: &Params) -> Result {
        Ok(())
    }

    #[inline(always)]
    fn compress(context: &mut lzo::WorkMem, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        if RLE {
            lzo::compress_rle(context, src, dst)
        } else {
            lzo::compress(context, src, dst)
        }
    }
}
