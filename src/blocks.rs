// SPDX-License-Identifier: GPL-2.0
//! The allocation bitmap of a backing device: one bit per page-sized block, set while the
//! block holds a written-back page. Block 0 is handed out or not, as C zram of the kernel
//! (6.12 keeps it unused, so that a slot's block number is never 0; 7.3 uses it). Lock-free: a block is claimed with an atomic `fetch_or` on its
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

/// Claims and releases blocks `first..blocks` of a backing device.
///
/// # Invariants
///
/// `words.as_ref().len() == words_for(blocks)`; `first` is 0 or 1; the bits below `first` and
/// from `blocks` on are never set.
pub struct BlockMap<W> {
    words: W,
    blocks: usize,
    /// The first block handed out.
    first: usize,
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
    /// words; block 0 is handed out unless `skip_zero`.
    pub fn new(words: W, blocks: usize, skip_zero: bool) -> Result<Self, WrongSize> {
        let slice = words.as_ref();
        if slice.len() != words_for(blocks) || slice.iter().any(|w| w.load(Relaxed) != 0) {
            return Err(WrongSize);
        }
        let first = usize::from(skip_zero);
        Ok(Self {
            words,
            blocks,
            first,
            next: AtomicUsize::new(first),
            used: AtomicUsize::new(0),
        })
    }

    /// Blocks in use.
    pub fn used(&self) -> usize {
        self.used.load(Relaxed)
    }

    /// Claims a free block; `None` when every block from `first` on is in use.
    pub fn claim(&self) -> Option<usize> {
        let words = self.words.as_ref();
        let first = self.first;
        let start = self.next.load(Relaxed).clamp(first, self.blocks.max(first));
        // From `start` to the end, then from block `first` to `start`, word by word.
        let mut block = start;
        let mut wrapped = false;
        loop {
            if block >= self.blocks {
                if wrapped || start <= first {
                    return None;
                }
                wrapped = true;
                block = first;
            }
            if wrapped && block >= start {
                return None;
            }
            let (word, bit) = (block / BITS, block % BITS);
            let current = words[word].load(Relaxed);
            // Free bits of this word from `bit` on, below `blocks`, and from `first` on.
            let mut free = !current & (usize::MAX << bit);
            if word == self.blocks / BITS {
                free &= (1usize << (self.blocks % BITS)) - 1;
            }
            if word == 0 {
                free &= usize::MAX << first;
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
        if block < self.first || block >= self.blocks {
            return false;
        }
        let mask = 1usize << (block % BITS);
        if self.words.as_ref()[block / BITS].fetch_and(!mask, Relaxed) & mask == 0 {
            return false;
        }
        self.used.fetch_sub(1, Relaxed);
        true
    }

    /// Whether `block` is claimed (what the host tests check the map against).
    #[allow(dead_code)]
    pub fn is_claimed(&self, block: usize) -> bool {
        block < self.blocks
            && self.words.as_ref()[block / BITS].load(Relaxed) & (1usize << (block % BITS)) != 0
    }
}
