// SPDX-License-Identifier: GPL-2.0
//! Same-element detection: is a page one machine word repeated? Such a page is stored as just
//! that word, with no allocation and no compression.
//!
//! The scan reads the page through its aligned words (`words.rs`), the last word first (real
//! data often differs at the end, so most non-same pages are rejected after two loads), then
//! compares the page 32 words (four cache lines) at a time, stopping at the first group with a
//! difference. Plain scalar code: kernel Rust targets are soft-float, so SIMD would need
//! `kernel_fpu_begin()`, which costs more than the scan.
//! Shared with the host crate, where it is tested against a naive scan and benchmarked.

use crate::words::as_words;

/// Bytes of one word: the fill unit (`unsigned long`, 64-bit on the supported targets).
pub const WORD: usize = 8;

/// Words compared per step of the scan.
const GROUP_WORDS: usize = 32;

/// The repeated word if every word of `page` is the same, in native byte order. `page` must
/// be a whole number of words (a 4 KiB page is 512) and start on a word boundary, as a page
/// does: any other slice, and an empty one, is not looked at (`None`), which only means its
/// content is compressed. The page is read through its aligned words ([`as_words`]); the
/// two-word check is inline in the caller, the scan of the rest a function of its own, so
/// that its loop leaves the caller's registers alone.
#[inline(always)]
pub fn same_filled(page: &[u8]) -> Option<u64> {
    let words = as_words(page)?;
    let (&first, _) = words.split_first()?;
    if *words.last()? != first {
        return None;
    }
    all_words_are(words, first).then_some(first)
}

/// Whether every word of `words` is `first`.
#[inline(never)]
fn all_words_are(words: &[u64], first: u64) -> bool {
    // 32 words (four cache lines) per step, OR-ing their differences, which the compiler turns
    // into a compare and branch per word: the loop's own three instructions come once per
    // 256 bytes (about 2.1 instructions per word, against 2.4 with eight words per step).
    // The first and last words are compared again; that costs less than splitting the loop.
    let mut groups = words.chunks_exact(GROUP_WORDS);
    for group in &mut groups {
        let differs = group
            .iter()
            .fold(0, |differs, &word| differs | (word ^ first));
        if differs != 0 {
            return false;
        }
    }
    groups.remainder().iter().all(|&word| word == first)
}
