// SPDX-License-Identifier: GPL-2.0
//! The allocation bitmap of a backing device: one bit per page-sized block, set while the
//! block holds a written-back page. Block 0 is never handed out (as C zram, so that a slot's
//! block number is never 0). Lock-free: a block is claimed with an atomic `fetch_or` on its
//! word, so writers of several pages claim blocks concurrently. Unlike C zram 6.12, which scans
//! from block 1 for every page it writes back (quadratic in a long writeback), the search
//! starts where the last claim ended and wraps around once. Pure logic over atomics, shared
//! with the host crate; the module owns the words' memory.

use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

const BITS: usize = usize::BITS as usize;

/// The words a bitmap of `blocks` bits needs.
pub const fn words_for(blocks: usize) -> usize {
    blocks.div_ceil(BITS)
}

/// Claims and releases blocks `1..blocks` of a backing device.
///
/// # Invariants
///
/// `words.as_ref().len() == words_for(blocks)`; bit 0 and the bits from `blocks` on are never
/// set.
pub struct BlockMap<W> {
    words: W,
    blocks: usize,
    /// Where the next search starts: just past the last block claimed.
    next: AtomicUsize,
    /// Blocks claimed and not released.
    used: AtomicUsize,
}

/// A bitmap of the wrong size was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongSize;

impl<W: AsRef<[AtomicUsize]>> BlockMap<W> {
    /// A map of `blocks` blocks over `words`, which must be [`words_for`]`(blocks)` zeroed
    /// words.
    pub fn new(words: W, blocks: usize) -> Result<Self, WrongSize> {
        let slice = words.as_ref();
        if slice.len() != words_for(blocks) || slice.iter().any(|w| w.load(Relaxed) != 0) {
            return Err(WrongSize);
        }
        Ok(Self {
            words,
            blocks,
            next: AtomicUsize::new(1),
            used: AtomicUsize::new(0),
        })
    }

    /// Blocks of the device, the unusable block 0 included.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Blocks in use.
    pub fn used(&self) -> usize {
        self.used.load(Relaxed)
    }

    /// Claims a free block; `None` when every block but 0 is in use.
    pub fn claim(&self) -> Option<usize> {
        let words = self.words.as_ref();
        let start = self.next.load(Relaxed).clamp(1, self.blocks.max(1));
        // From `start` to the end, then from block 1 to `start`, word by word.
        let mut block = start;
        let mut wrapped = false;
        loop {
            if block >= self.blocks {
                if wrapped || start <= 1 {
                    return None;
                }
                wrapped = true;
                block = 1;
            }
            if wrapped && block >= start {
                return None;
            }
            let (word, bit) = (block / BITS, block % BITS);
            let current = words[word].load(Relaxed);
            // Free bits of this word from `bit` on, below `blocks`, and not block 0.
            let mut free = !current & (usize::MAX << bit);
            if word == self.blocks / BITS {
                free &= (1usize << (self.blocks % BITS)) - 1;
            }
            if word == 0 {
                free &= !1;
            }
            if free == 0 {
                block = (word + 1) * BITS;
                continue;
            }
            let found = free.trailing_zeros() as usize;
            let mask = 1usize << found;
            if words[word].fetch_or(mask, Relaxed) & mask != 0 {
                // Taken meanwhile: look at this word again.
                block = word * BITS + found;
                continue;
            }
            let claimed = word * BITS + found;
            self.used.fetch_add(1, Relaxed);
            self.next.store(claimed + 1, Relaxed);
            return Some(claimed);
        }
    }

    /// Releases `block`; returns false (and changes nothing) when it was not claimed.
    pub fn release(&self, block: usize) -> bool {
        if block == 0 || block >= self.blocks {
            return false;
        }
        let mask = 1usize << (block % BITS);
        if self.words.as_ref()[block / BITS].fetch_and(!mask, Relaxed) & mask == 0 {
            return false;
        }
        self.used.fetch_sub(1, Relaxed);
        true
    }

    /// Whether `block` is claimed.
    pub fn is_claimed(&self, block: usize) -> bool {
        block < self.blocks
            && self.words.as_ref()[block / BITS].load(Relaxed) & (1usize << (block % BITS)) != 0
    }
}
