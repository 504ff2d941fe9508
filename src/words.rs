// SPDX-License-Identifier: GPL-2.0
//! A byte slice's machine words ([`as_words`]): the view the same-element scan loads a page
//! through. A page's memory is page-aligned, but a word read out of a byte slice is, to the
//! compiler, unaligned, and on targets whose kernel code must not make unaligned accesses
//! (arm64's kernel target) every such word becomes eight byte loads and seven shifts and ORs.
//! Shared with the host crate.

/// `bytes` as words, if it starts on a word boundary and is a whole number of words (a page
/// always is); `None` otherwise. Two instructions where the length is known (a page's): a test
/// of the address's low bits and a branch.
#[inline(always)]
pub fn as_words(bytes: &[u8]) -> Option<&[u64]> {
    let word = core::mem::size_of::<u64>();
    // A mask, not `%` (`word` is a power of two): newer clippy asks for `is_multiple_of` for
    // the `%` form, which the oldest supported rustc (1.85) lacks.
    if (bytes.as_ptr() as usize | bytes.len()) & (word - 1) != 0 {
        return None;
    }
    // SAFETY: the address is aligned for `u64` and the `bytes.len() / word` words lie exactly
    // within `bytes`, borrowed for as long as it is; every bit pattern is a valid `u64`.
    Some(unsafe { core::slice::from_raw_parts(bytes.as_ptr().cast::<u64>(), bytes.len() / word) })
}
