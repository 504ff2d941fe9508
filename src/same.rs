// SPDX-License-Identifier: GPL-2.0
//! Same-element detection: is a page one machine word repeated? Such a page is stored as just
//! that word, with no allocation and no compression.
//!
//! The scan reads the last word first (real data often differs at the end, so most non-same
//! pages are rejected after two loads), then compares the page eight words (a cache line) at a
//! time, stopping at the first group with a difference. Plain scalar code: kernel Rust targets
//! are soft-float, so SIMD would need `kernel_fpu_begin()`, which costs more than the scan.
//! Shared with the host crate, where it is tested against a naive scan and benchmarked.

/// Bytes of one word: the fill unit (`unsigned long`, 64-bit on the supported targets).
pub const WORD: usize = 8;

/// One word from an 8-byte chunk (`chunks_exact` lets the compiler drop every length check).
#[inline(always)]
fn word(chunk: &[u8]) -> u64 {
    u64::from_ne_bytes(chunk.try_into().unwrap_or([0; WORD]))
}

/// The repeated word if every word of `page` is the same, in native byte order. `page` must
/// be a whole number of words (a 4 KiB page is 512); an empty slice is not same-filled.
#[inline]
pub fn same_filled(page: &[u8]) -> Option<u64> {
    if page.is_empty() || page.len() % WORD != 0 {
        return None;
    }
    let first = word(&page[..WORD]);
    if word(&page[page.len() - WORD..]) != first {
        return None;
    }
    // Eight words (a cache line) per step, OR-ing their differences: one branch per 64 bytes.
    // The first and last words are compared again; that costs less than splitting the loop.
    let mut groups = page.chunks_exact(8 * WORD);
    for group in &mut groups {
        let differs = group
            .chunks_exact(WORD)
            .fold(0, |differs, chunk| differs | (word(chunk) ^ first));
        if differs != 0 {
            return None;
        }
    }
    groups
        .remainder()
        .chunks_exact(WORD)
        .all(|chunk| word(chunk) == first)
        .then_some(first)
}
