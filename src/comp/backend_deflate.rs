// SPDX-License-Identifier: GPL-2.0
//! deflate: raw deflate with a 2 KiB window, as the crypto API and C zram use it (C's
//! `backend_deflate.c`), at a level, zlib's default by default. A stream holds a deflate stream,
//! a decompression context an inflate stream.

use super::{Backend, Decompressor, Params};
use crate::comp::algorithm::NO_LEVEL;
use crate::kapi::zlib;
use kernel::prelude::*;

/// Raw deflate (negative: no zlib header) with an 11-bit window, unless [`WINBITS`] asks for
/// another: -15 to -9 raw, 9 to 15 with zlib's header.
const WINDOW_BITS: i32 = -11;
/// deflate's backend parameter, where the kernel's `algorithm_params` knows it (7.x).
const WINBITS: &str = "deflate.winbits";

/// `deflate`.
pub(crate) struct Deflate;

/// Decompresses with the decompression context's inflate stream.
fn decompress(inflate: &mut zlib::Inflate, src: &[u8], dst: &mut [u8]) -> usize {
    super::decompressed_len(dst, |dst| inflate.decompress(src, dst))
}

/// The window `params` ask for, or deflate's own; `EINVAL`, logged, for one zlib does not take.
/// Checked on every kernel (C zram checks it where it has the key, 7.2 on, when the device is
/// initialised, as it does the other parameters only from 7.3).
fn window_bits(params: &Params) -> Result<i32> {
    match params.backend_param(WINBITS) {
        NO_LEVEL => Ok(WINDOW_BITS),
        bits if (-15..=-9).contains(&bits) || (9..=15).contains(&bits) => Ok(bits),
        bits => {
            pr_err!("{}: invalid winbits {}\n", Deflate::NAME, bits);
            Err(EINVAL)
        }
    }
}

impl Backend for Deflate {
    const NAME: &'static str = "deflate";
    const C_DEFAULT: bool = cfg!(CONFIG_ZRAM_DEF_COMP_DEFLATE);
    type Context = zlib::Deflate;
    type ReadContext = zlib::Inflate;
    const DECOMPRESSOR: Decompressor<zlib::Inflate> = Decompressor {
        stateless: None,
        with_context: Some(decompress),
    };

    fn default_level() -> i32 {
        zlib::DEFAULT_COMPRESSION
    }

    fn check(params: &Params) -> Result {
        super::check_no_dict(Self::NAME, params)?;
        super::check_level(
            Self::NAME,
            params,
            zlib::DEFAULT_COMPRESSION..=zlib::BEST_COMPRESSION,
        )
    }

    fn create(params: Params) -> Result<zlib::Deflate> {
        zlib::Deflate::new(params.level, window_bits(&params)?)
    }

    fn create_reader(_first: &zlib::Deflate, params: &Params) -> Result<zlib::Inflate> {
        zlib::Inflate::new(window_bits(params)?)
    }

    fn compress(deflate: &mut zlib::Deflate, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        deflate.compress(src, dst)
    }
}
