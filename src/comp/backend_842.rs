// SPDX-License-Identifier: GPL-2.0
//! 842: software 842 compression (C's `backend_842.c`). No levels; decompresses without a
//! context.

use super::{Backend, Decompressor, Params};
use crate::kapi::sw842;
use kernel::prelude::*;

/// `842`.
pub(crate) struct Sw842;

impl Backend for Sw842 {
    const NAME: &'static str = "842";
    const C_DEFAULT: bool = cfg!(CONFIG_ZRAM_DEF_COMP_842);
    type Context = sw842::WorkMem;
    type ReadContext = ();
    const DECOMPRESSOR: Decompressor<()> = Decompressor {
        stateless: Some(sw842::decompress),
        with_context: None,
    };

    fn check(params: &Params) -> Result {
        super::check_no_dict(Self::NAME, params)?;
        super::check_no_level(Self::NAME, params)
    }

    fn create(_params: Params) -> Result<sw842::WorkMem> {
        sw842::WorkMem::new()
    }

    fn create_reader(_first: &sw842::WorkMem, _params: &Params) -> Result {
        Ok(())
    }

    fn compress(context: &mut sw842::WorkMem, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        sw842::compress(context, src, dst)
    }
}
