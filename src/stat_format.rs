// SPDX-License-Identifier: GPL-2.0
//! The text of zram's statistics files, field for field and width for width as C zram prints
//! them (`mm_stat`, `io_stat`, `debug_stat`, debugfs `block_state`), so that zramctl, zram-generator and every `mm_stat` reader parse
//! zram_rs unchanged. Pure formatting over `core::fmt::Write`: the module writes into the sysfs
//! page, the host crate into a `String` for its tests. Each line is built in a buffer on the
//! stack by [`Line`], a few instructions per digit, and handed over whole: `core::fmt`'s
//! padded integers cost more than C's `vsnprintf()`, and statistics files are read often
//! (monitors poll `mm_stat`; `block_state` is a line per stored page).

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
        let mut line = Line::<{ 9 * 21 }>::new();
        line.unsigned(self.orig_data_size, 8)?;
        for value in [self.compr_data_size, self.mem_used_total, self.mem_limit] {
            line.byte(b' ')?;
            line.unsigned(value, 8)?;
        }
        line.byte(b' ')?;
        // `%8ld`: C prints this one as a signed long.
        line.signed(self.mem_used_max as i64, 8)?;
        for value in [
            self.same_pages,
            self.pages_compacted,
            self.huge_pages,
            self.huge_pages_since,
        ] {
            line.byte(b' ')?;
            line.unsigned(value, 8)?;
        }
        line.byte(b'\n')?;
        out.write_str(line.as_str()?)
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
        let mut line = Line::<{ 3 * 21 + 2 }>::new();
        line.unsigned(self.failed_reads, 8)?;
        line.byte(b' ')?;
        line.unsigned(self.failed_writes, 8)?;
        line.bytes(b" 0 ")?;
        line.unsigned(self.notify_free, 8)?;
        line.byte(b'\n')?;
        out.write_str(line.as_str()?)
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
        let mut line = Line::<{ 11 + 2 * 21 }>::new();
        line.bytes(b"version: 1\n")?;
        match self.writestall {
            Some(writestall) => line.unsigned(writestall, 8)?,
            None => line.byte(b'0')?,
        }
        line.byte(b' ')?;
        line.unsigned(self.miss_free, 8)?;
        line.byte(b'\n')?;
        out.write_str(line.as_str()?)
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

    /// Writes C's line, `"%12zd %12lld.%06lu %c%c%c%c%c%c\n"` (6.12; 7.x prints the same
    /// digits with unsigned conversions; each mark's letter, or `.` when not set), at the start
    /// of `out` if it fits with a byte to spare (C's `snprintf()` into the rest of the read,
    /// which wants room for the NUL); returns its length.
    pub fn write_into(&self, out: &mut [u8]) -> Option<usize> {
        let line = self.line().ok()?;
        let text = line.as_bytes();
        if out.len() <= text.len() {
            return None;
        }
        out.get_mut(..text.len())?.copy_from_slice(text);
        Some(text.len())
    }

    fn line(&self) -> Result<Line<{ Self::MAX_LEN }>, fmt::Error> {
        let mut line = Line::new();
        line.unsigned(self.index as u64, 12)?;
        line.byte(b' ')?;
        line.unsigned(self.seconds, 12)?;
        line.byte(b'.')?;
        line.zero_padded(u64::from(self.micros), 6)?;
        line.byte(b' ')?;
        let mark = |set: bool, letter: u8| if set { letter } else { b'.' };
        line.bytes(&[
            mark(self.same, b's'),
            mark(self.written_back, b'w'),
            mark(self.huge, b'h'),
            mark(self.idle, b'i'),
            mark(self.recompressed, b'r'),
            mark(self.incompressible, b'n'),
            b'\n',
        ])?;
        Ok(line)
    }
}

/// A line of ASCII text built in place, at most `N` bytes; every append fails once it would
/// not fit (nothing is cut silently).
struct Line<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Line<N> {
    fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
        }
    }

    fn bytes(&mut self, bytes: &[u8]) -> fmt::Result {
        let end = self.len.checked_add(bytes.len()).ok_or(fmt::Error)?;
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    fn byte(&mut self, byte: u8) -> fmt::Result {
        self.bytes(&[byte])
    }

    /// `value` in decimal, right-aligned in `width` columns (wider if it has more digits): C's
    /// `%<width>llu`.
    fn unsigned(&mut self, value: u64, width: usize) -> fmt::Result {
        self.number(false, value, width, b' ')
    }

    /// C's `%<width>ld`: the sign next to the digits, the spaces before it.
    fn signed(&mut self, value: i64, width: usize) -> fmt::Result {
        self.number(value < 0, value.unsigned_abs(), width, b' ')
    }

    /// C's `%0<width>lu`.
    fn zero_padded(&mut self, value: u64, width: usize) -> fmt::Result {
        self.number(false, value, width, b'0')
    }

    fn number(&mut self, negative: bool, mut value: u64, width: usize, pad: u8) -> fmt::Result {
        // u64::MAX has 20 digits.
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (value % 10) as u8;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        let digits = &digits[start..];
        let used = digits.len() + usize::from(negative);
        for _ in used..width {
            self.byte(pad)?;
        }
        if negative {
            self.byte(b'-')?;
        }
        self.bytes(digits)
    }

    fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// The text (only ASCII is ever appended, so this never fails).
    fn as_str(&self) -> Result<&str, fmt::Error> {
        core::str::from_utf8(self.as_bytes()).map_err(|_| fmt::Error)
    }
}
