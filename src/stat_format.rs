// SPDX-License-Identifier: GPL-2.0
//! The text of zram's statistics files, field for field and width for width as C zram prints
//! them (`mm_stat`, `io_stat`, `debug_stat`, debugfs `block_state`), so that zramctl, zram-generator and every `mm_stat` reader parse
//! zram_rs unchanged. Pure formatting over `core::fmt::Write`: the module writes into the sysfs
//! page, the host crate into a `String` for its tests.

use core::fmt::{self, Write};

/// The nine fields of `/sys/block/zramN/mm_stat`, in C zram's order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MmStat {
    /// Bytes of data stored: every allocated slot counts `PAGE_SIZE`.
    pub orig_data_size: u64,
    /// Bytes of the stored objects (a huge page counts `PAGE_SIZE`, a same-filled page 0).
    pub compr_data_size: u64,
    /// Bytes of memory the allocator holds for this device.
    pub mem_used_total: u64,
    /// The memory limit in bytes, 0 for none.
    pub mem_limit: u64,
    /// The high-water mark of `mem_used_total`, in bytes.
    pub mem_used_max: u64,
    /// Number of same-filled pages stored as a fill word.
    pub same_pages: u64,
    /// Number of pages freed by compaction.
    pub pages_compacted: u64,
    /// Number of pages stored uncompressed.
    pub huge_pages: u64,
    /// Number of pages stored uncompressed since the device was initialised.
    pub huge_pages_since: u64,
}

impl MmStat {
    /// Writes the line C prints with `"%8llu %8llu %8llu %8lu %8ld %8llu %8lu %8llu %8llu\n"`.
    pub fn write_to(&self, out: &mut impl Write) -> fmt::Result {
        writeln!(
            out,
            "{:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            self.orig_data_size,
            self.compr_data_size,
            self.mem_used_total,
            self.mem_limit,
            // `%8ld`: C prints this one as a signed long.
            self.mem_used_max as i64,
            self.same_pages,
            self.pages_compacted,
            self.huge_pages,
            self.huge_pages_since
        )
    }
}

/// The fields of `/sys/block/zramN/io_stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoStat {
    /// Reads that ended in an I/O error.
    pub failed_reads: u64,
    /// Writes that ended in an I/O error.
    pub failed_writes: u64,
    /// Pages freed by swap-slot-free notifications, discards and write-zeroes.
    pub notify_free: u64,
}

impl IoStat {
    /// Writes the line C prints with `"%8llu %8llu 0 %8llu\n"` (the third field, once
    /// `invalid_io`, is a literal unpadded 0 in 6.12).
    pub fn write_to(&self, out: &mut impl Write) -> fmt::Result {
        writeln!(
            out,
            "{:>8} {:>8} 0 {:>8}",
            self.failed_reads, self.failed_writes, self.notify_free
        )
    }
}

/// The fields of `/sys/block/zramN/debug_stat` (a format C declares unstable; version 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DebugStat {
    /// Pool allocations that had to take the slow path with direct reclaim; `None` where C
    /// zram no longer counts them (7.x prints a bare `0` in their place).
    pub writestall: Option<u64>,
    /// Swap slot-free notifications that found the slot locked and freed nothing.
    pub miss_free: u64,
}

impl DebugStat {
    /// Writes C's `"version: %d\n%8llu %8llu\n"` (6.12), or `"version: %d\n0 %8llu\n"` without
    /// a writestall count (7.x).
    pub fn write_to(&self, out: &mut impl Write) -> fmt::Result {
        writeln!(out, "version: 1")?;
        match self.writestall {
            Some(writestall) => writeln!(out, "{:>8} {:>8}", writestall, self.miss_free),
            None => writeln!(out, "0 {:>8}", self.miss_free),
        }
    }
}

/// One line of debugfs `block_state`: an allocated slot, its last access and its marks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockState {
    /// The slot's index.
    pub index: usize,
    /// Its last access, in whole seconds of boot time (0: none recorded).
    pub seconds: u64,
    /// Microseconds past `seconds` (zram_rs keeps whole seconds, as C 7.x: always 0).
    pub micros: u32,
    /// `s`: same-filled.
    pub same: bool,
    /// `w`: written back.
    pub written_back: bool,
    /// `h`: huge.
    pub huge: bool,
    /// `i`: idle.
    pub idle: bool,
    /// `r`: stored by a recompression algorithm.
    pub recompressed: bool,
    /// `n`: no algorithm compresses it.
    pub incompressible: bool,
}

impl BlockState {
    /// The longest line: two 20-digit numbers, the marks, the separators.
    pub const MAX_LEN: usize = 20 + 1 + 20 + 1 + 6 + 1 + 6 + 1;

    /// Writes C's `"%12zd %12lld.%06lu %c%c%c%c%c%c\n"` (6.12; 7.x prints the same digits with
    /// unsigned conversions): each mark's letter, or `.` when not set.
    pub fn write_to(&self, out: &mut impl Write) -> fmt::Result {
        let mark = |set: bool, letter: char| if set { letter } else { '.' };
        writeln!(
            out,
            "{:>12} {:>12}.{:06} {}{}{}{}{}{}",
            self.index,
            self.seconds,
            self.micros,
            mark(self.same, 's'),
            mark(self.written_back, 'w'),
            mark(self.huge, 'h'),
            mark(self.idle, 'i'),
            mark(self.recompressed, 'r'),
            mark(self.incompressible, 'n'),
        )
    }

    /// Writes the line at the start of `out` if it fits with a byte to spare (C's `snprintf()`
    /// into the rest of the read, which wants room for the NUL); returns its length.
    pub fn write_into(&self, out: &mut [u8]) -> Option<usize> {
        let mut line = [0u8; Self::MAX_LEN];
        let mut writer = SliceWriter {
            buf: &mut line,
            len: 0,
        };
        self.write_to(&mut writer).ok()?;
        let len = writer.len;
        if out.len() <= len {
            return None;
        }
        out.get_mut(..len)?.copy_from_slice(line.get(..len)?);
        Some(len)
    }
}

/// Formats into a byte slice; fails once it is full.
struct SliceWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
