// SPDX-License-Identifier: GPL-2.0
//! deflate: raw deflate with a 2 KiB window, as the crypto API and C zram use it (C's
//! `backend_deflate.c`), at a level, zlib's default by default. A stream holds a deflate and
//! an inflate stream, so readers need a stream.

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

/// A stream's zlib streams. Should the inflate stream fail to start, the deflate stream made
/// before it is ended as it drops.
pub(crate) struct DeflateContext {
    deflate: zlib::Deflate,
    inflate: zlib::Inflate,
}

/// Decompresses with the stream's inflate stream.
fn decompress(context: &mut DeflateContext, src: &[u8], dst: &mut [u8]) -> Result {
    context.inflate.decompress(src, dst)
}

impl Backend for Deflate {
    const NAME: &'static str = "deflate";
    const C_DEFAULT: bool = cfg!(CONFIG_ZRAM_DEF_COMP_DEFLATE);
    type Context = DeflateContext;
    const DECOMPRESSOR: Decompressor<DeflateContext> = Decompressor {
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
        )?;
        let bits = params.backend_param(WINBITS);
        if bits != NO_LEVEL && !(-15..=-9).contains(&bits) && !(9..=15).contains(&bits) {
            pr_err!("{}: invalid winbits {}\n", Self::NAME, bits);
            return Err(EINVAL);
        }
        Ok(())
    }

    fn create(params: Params) -> Result<DeflateContext> {
        let window_bits = match params.backend_param(WINBITS) {
            NO_LEVEL => WINDOW_BITS,
            bits => bits,
        };
        Ok(DeflateContext {
            deflate: zlib::Deflate::new(params.level, window_bits)?,
            inflate: zlib::Inflate::new(window_bits)?,
        })
    }

    fn compress(context: &mut DeflateContext, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        context.deflate.compress(src, dst)
    }
}
