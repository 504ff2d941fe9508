// SPDX-License-Identifier: GPL-2.0
//! Compression units: the pure logic of storing a run of neighbouring pages as one compressed
//! object (the zram_rs-only `compress_unit`, see `Documentation/zram_rs.rst`, "Compression
//! units"). It owns the unit sizes a device accepts ([`UnitSize`]), which whole
//! units a request covers ([`UnitSize::whole_units`]), whether a unit's compressed size is
//! worth one object ([`UnitSize::worth_an_object`]), how those bytes are cut into zsmalloc
//! objects, which are at most a page ([`Pieces`]), and which pages of a unit still refer to
//! its object ([`Members`]), so that the object goes with its last page. Shared with the host
//! crate, which tests it.

use core::ops::Range;

/// The largest unit, in bytes.
pub const MAX_UNIT_BYTES: u64 = 64 << 10;

/// The most pages a unit holds: 64 KiB of 4 KiB pages, one bit each of a [`Members`] mask.
pub const MAX_UNIT_PAGES: usize = 16;

/// The unit sizes `compress_unit` accepts, in bytes: those of them from the page size up.
pub const UNIT_BYTES: [u64; 3] = [4 << 10, 16 << 10, MAX_UNIT_BYTES];

/// The size of a device's compression units: `1 << shift` pages.
///
/// # Invariants
///
/// `1 << shift` is at most [`MAX_UNIT_PAGES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitSize {
    shift: u32,
}

/// Why a unit size is refused (`EINVAL` for every one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not a decimal number.
    NotANumber,
    /// Not one of [`UNIT_BYTES`].
    NotAUnitSize,
    /// Smaller than a page of this kernel.
    BelowPage,
}

impl UnitSize {
    /// One page: every page on its own, as C zram stores them (the default).
    pub const PAGE: Self = Self { shift: 0 };

    /// The unit of `bytes` on a kernel of `1 << page_shift`-byte pages: one of [`UNIT_BYTES`]
    /// and at least a page.
    pub fn of_bytes(bytes: u64, page_shift: u32) -> Result<Self, Refusal> {
        if !UNIT_BYTES.contains(&bytes) {
            return Err(Refusal::NotAUnitSize);
        }
        let page = 1u64.checked_shl(page_shift).unwrap_or(u64::MAX);
        if bytes < page {
            return Err(Refusal::BelowPage);
        }
        // Both powers of two, `bytes` the larger.
        let shift = bytes.trailing_zeros() - page.trailing_zeros();
        // Only for pages below 4 KiB, which no kernel has.
        if (1usize << shift) > MAX_UNIT_PAGES {
            return Err(Refusal::NotAUnitSize);
        }
        // INVARIANT: checked right above.
        Ok(Self { shift })
    }

    /// The unit of `1 << shift` pages, if it is not larger than [`MAX_UNIT_PAGES`].
    pub fn from_shift(shift: u32) -> Option<Self> {
        // INVARIANT: checked.
        (shift < usize::BITS && 1usize << shift <= MAX_UNIT_PAGES).then_some(Self { shift })
    }

    /// A `compress_unit` write: a decimal number of bytes (leading `+`, a trailing newline, as
    /// `kstrtou64(…, 10)` takes it), see [`Self::of_bytes`].
    pub fn parse(input: &[u8], page_shift: u32) -> Result<Self, Refusal> {
        let bytes = crate::parse::kstrtoull(input, 10).map_err(|_| Refusal::NotANumber)?;
        Self::of_bytes(bytes, page_shift)
    }

    /// Pages in a unit.
    pub fn pages(self) -> usize {
        1 << self.shift
    }

    /// log2 of [`Self::pages`].
    pub fn shift(self) -> u32 {
        self.shift
    }

    /// Bytes in a unit on a kernel of `1 << page_shift`-byte pages.
    pub fn bytes(self, page_shift: u32) -> u64 {
        1u64 << (self.shift + page_shift)
    }

    /// Whether units are single pages (C zram's storage).
    pub fn is_page(self) -> bool {
        self.shift == 0
    }

    /// The unit holding page `index`, and the page's place in it.
    pub fn locate(self, index: u64) -> (u64, usize) {
        let place = index & ((1 << self.shift) - 1);
        // No truncation: below `MAX_UNIT_PAGES`.
        (index >> self.shift, place as usize)
    }

    /// The pages of unit `unit`.
    pub fn pages_of(self, unit: u64) -> Range<u64> {
        let first = unit << self.shift;
        first..first.saturating_add(1 << self.shift)
    }

    /// The units whose every page lies in `pages` (a request's pages), in order: the pages
    /// before the first and after the last are the request's partial units, stored page by
    /// page.
    pub fn whole_units(self, pages: Range<u64>) -> Range<u64> {
        let size = 1u64 << self.shift;
        // Rounded up without overflow: `start / size` plus one for a remainder.
        let first = (pages.start >> self.shift) + u64::from(pages.start & (size - 1) != 0);
        let end = pages.end >> self.shift;
        first..end.max(first)
    }

    /// Whether a unit that compressed to `len` bytes is stored as one object: below the size
    /// at which each of its pages, stored alone, would take a whole page (`huge_class_size`
    /// per page, zsmalloc's huge class, as C zram stores a page that compresses to it or more
    /// uncompressed). A unit at or above it is stored page by page.
    pub fn worth_an_object(self, len: usize, huge_class_size: usize) -> bool {
        len != 0 && len < huge_class_size.saturating_mul(self.pages())
    }
}

/// How a unit's object of `len` compressed bytes is cut into zsmalloc objects, which are at
/// most a page: whole pages (zsmalloc's huge class, one object per page of the pool: no room
/// lost), then the rest in an object of its own size class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pieces {
    len: usize,
    page: usize,
}

impl Pieces {
    /// The pieces of `len` bytes in objects of at most `page` bytes (a power of two).
    pub fn new(len: usize, page: usize) -> Self {
        Self { len, page }
    }

    /// How many pieces.
    pub fn count(self) -> usize {
        self.len.div_ceil(self.page)
    }

    /// The byte range of the object's bytes that piece `i` holds (empty past the last).
    pub fn range(self, i: usize) -> Range<usize> {
        let start = i.saturating_mul(self.page).min(self.len);
        start..start.saturating_add(self.page).min(self.len)
    }

    /// Every piece's byte range, in order.
    pub fn ranges(self) -> impl Iterator<Item = Range<usize>> {
        (0..self.count()).map(move |i| self.range(i))
    }
}

/// Which pages of a unit still refer to its object: bit `i` for the unit's page `i`. The
/// object lives while any bit is set; a page's bit is taken away, under that page's slot lock,
/// when the page gets other content or is freed, and the thread that takes the last one frees
/// the object (the kernel keeps the mask in an atomic word: [`Members::released_last`] reads
/// what its `fetch_and` returned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Members(u16);

impl Members {
    /// No page.
    pub const NONE: Self = Self(0);

    /// Every page of a unit of `size` but those of `apart` (pages stored on their own, such as
    /// same-filled ones).
    pub fn all_but(size: UnitSize, apart: Members) -> Self {
        // `pages() <= 16` (invariant of `UnitSize`): the shift stays below 17.
        let all = ((1u32 << size.pages()) - 1) as u16;
        Self(all & !apart.0)
    }

    /// The mask of one page.
    pub fn page(place: usize) -> Self {
        Self(1u16.checked_shl(place as u32).unwrap_or(0))
    }

    /// The mask with `place` added.
    pub fn with(self, place: usize) -> Self {
        Self(self.0 | Self::page(place).0)
    }

    /// The mask without `place`.
    pub fn without(self, place: usize) -> Self {
        Self(self.0 & !Self::page(place).0)
    }

    /// Whether `place` refers to the object.
    pub fn contains(self, place: usize) -> bool {
        self.0 & Self::page(place).0 != 0
    }

    /// Whether no page refers to it any more.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Pages that refer to it (what the host tests check the masks with).
    #[allow(dead_code)]
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// The bits.
    pub fn bits(self) -> u16 {
        self.0
    }

    /// The mask of `bits`.
    pub fn from_bits(bits: u16) -> Self {
        Self(bits)
    }

    /// Whether taking the pages of `taken` away from a mask that was `old` (what the atomic
    /// `fetch_and` returned) took the last of them: the object is to be freed. The pages of
    /// `taken` must have been in `old` (a page's bit is taken once, by the holder of its
    /// share).
    pub fn released_last(old: Self, taken: Self) -> bool {
        old.0 & taken.0 == taken.0 && old.0 & !taken.0 == 0
    }
}
