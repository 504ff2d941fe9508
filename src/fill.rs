// SPDX-License-Identifier: GPL-2.0
//! Expanding a same-filled page's word back into memory: [`fill`] writes the bytes a page made
//! of `word` has at a given offset, over any range (whole page or a sub-page read), straight
//! into the destination. The aligned middle goes through [`memset64`], dispatched by
//! architecture with `core::arch::asm!`: `rep stosq` on x86_64; on aarch64 `dc zva` for zero
//! (when `DCZID_EL0` permits it, in blocks of the size it reports) and `stp` pairs otherwise; a
//! plain loop elsewhere. Only general-purpose registers are used (kernel Rust is soft-float).
//! Shared with the host crate, where it is tested and benchmarked.

use crate::same::WORD;

/// Stores `count` copies of `value` at `dst`.
///
/// # Safety
///
/// `dst` is valid for writes of `count * 8` bytes. On aarch64 it must also be 8-byte aligned.
#[inline]
pub unsafe fn memset64(dst: *mut u64, value: u64, count: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `rep stosq` writes `count` quadwords from `dst` upwards (the kernel and user ABIs
    // keep the direction flag clear), which the caller allows. It uses no stack.
    unsafe {
        core::arch::asm!(
            "rep stosq",
            inout("rcx") count => _,
            inout("rdi") dst => _,
            in("rax") value,
            options(nostack, preserves_flags)
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: the caller allows the writes; `aarch64::fill` stays inside them.
    unsafe {
        aarch64::fill(dst, value, count)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for i in 0..count {
        // SAFETY: `i < count`, inside the range the caller allows.
        unsafe { dst.add(i).write_unaligned(value) };
    }
}

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    /// Bytes zeroed by one `dc zva`, or `None` when the instruction is prohibited.
    #[inline]
    fn zva_block_size() -> Option<usize> {
        let dczid: u64;
        // SAFETY: DCZID_EL0 is readable at every exception level; reading it has no effects.
        unsafe {
            core::arch::asm!("mrs {}, dczid_el0", out(reg) dczid, options(nomem, nostack, preserves_flags))
        };
        // Bit 4 (DZP) prohibits DC ZVA; bits 3:0 are log2 of the block size in 4-byte words.
        // A block of less than two words (never seen: the architecture's minimum in practice
        // is 16 bytes) is not worth it, and would stall the loop below.
        let block = 4usize << (dczid & 0xf);
        if dczid & (1 << 4) != 0 || block < 16 {
            None
        } else {
            Some(block)
        }
    }

    /// `stp` pairs from `dst` for `pairs` pairs of words.
    ///
    /// # Safety
    ///
    /// `dst` is 8-aligned and valid for `pairs * 16` bytes of writes.
    #[inline]
    unsafe fn store_pairs(dst: *mut u64, value: u64, pairs: usize) {
        if pairs == 0 {
            return;
        }
        // SAFETY: writes exactly `pairs` 16-byte pairs from `dst`, as the caller allows.
        unsafe {
            core::arch::asm!(
                "2:",
                "stp {v}, {v}, [{p}], #16",
                "subs {n}, {n}, #1",
                "b.ne 2b",
                v = in(reg) value,
                p = inout(reg) dst => _,
                n = inout(reg) pairs => _,
                options(nostack)
            );
        }
    }

    /// # Safety
    ///
    /// `dst` is 8-aligned and valid for `count * 8` bytes of writes.
    pub(super) unsafe fn fill(mut dst: *mut u64, value: u64, mut count: usize) {
        if value == 0 {
            if let Some(block) = zva_block_size() {
                let words_per_block = block / 8;
                // Words up to the first block boundary.
                let misaligned = (dst as usize) % block;
                let head = if misaligned == 0 {
                    0
                } else {
                    ((block - misaligned) / 8).min(count)
                };
                // SAFETY: inside the caller's range.
                unsafe { fill_words(dst, 0, head) };
                // SAFETY: as above.
                dst = unsafe { dst.add(head) };
                count -= head;
                while count >= words_per_block {
                    // SAFETY: `dst` is block-aligned and the whole block is inside the range.
                    unsafe {
                        core::arch::asm!("dc zva, {}", in(reg) dst, options(nostack, preserves_flags))
                    };
                    // SAFETY: stays inside the caller's range.
                    dst = unsafe { dst.add(words_per_block) };
                    count -= words_per_block;
                }
            }
        }
        // SAFETY: inside the caller's range.
        unsafe { fill_words(dst, value, count) };
    }

    /// `stp` pairs, then one `str` for an odd word.
    ///
    /// # Safety
    ///
    /// As [`fill`].
    unsafe fn fill_words(dst: *mut u64, value: u64, count: usize) {
        // SAFETY: `count / 2` pairs and then at most one word, inside the caller's range.
        unsafe {
            store_pairs(dst, value, count / 2);
            if count % 2 == 1 {
                dst.add(count - 1).write(value);
            }
        }
    }
}

/// Fills `dst` with the bytes found at `page_offset..page_offset + dst.len()` of a page made of
/// `word` repeated (native byte order).
#[inline]
pub fn fill(dst: &mut [u8], page_offset: usize, word: u64) {
    let len = dst.len();
    // The common case (whole pages, word-aligned sub-page reads): words only, inlined.
    // (A mask: `WORD` is a power of two; see `words::as_words`.)
    if (page_offset | len | dst.as_ptr() as usize) & (WORD - 1) == 0 {
        // SAFETY: `dst` is 8-aligned and holds exactly `len / 8` words.
        unsafe { memset64(dst.as_mut_ptr().cast::<u64>(), word, len / WORD) };
    } else {
        fill_unaligned(dst, page_offset, word);
    }
}

/// [`fill`] for a range that starts or ends inside a word: bytes up to the first word
/// boundary, whole words, then the remaining bytes.
#[inline(never)]
fn fill_unaligned(dst: &mut [u8], page_offset: usize, word: u64) {
    let len = dst.len();
    let pattern = word.to_ne_bytes();
    // Bytes until the pattern and the destination are both at a word boundary. In the kernel,
    // a page mapping is page-aligned, so both line up; elsewhere only the phase is honoured.
    let phase = page_offset % WORD;
    let align = (WORD - (dst.as_ptr() as usize) % WORD) % WORD;
    let head = if (WORD - phase) % WORD == align {
        align.min(len)
    } else {
        len
    };
    for (i, byte) in dst[..head].iter_mut().enumerate() {
        *byte = pattern[(phase + i) % WORD];
    }
    let words = (len - head) / WORD;
    if words != 0 {
        // SAFETY: `dst[head..]` holds at least `words * 8 > 0` bytes, so `head < len`, and
        // then `head` was chosen to reach an 8-aligned address.
        unsafe { memset64(dst.as_mut_ptr().add(head).cast::<u64>(), word, words) };
    }
    let tail = head + words * WORD;
    for (i, byte) in dst[tail..].iter_mut().enumerate() {
        *byte = pattern[(phase + tail + i) % WORD];
    }
}
