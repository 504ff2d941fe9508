// SPDX-License-Identifier: GPL-2.0
//! What `writeback` accepts, per kernel, with C zram's errors (6.12: one mode word or
//! `page_index=N`; 7.3: `key=value` parameters that select ranges of slots, each scanned as it
//! is read). Pure logic over the written bytes, shared with the host crate; the device applies
//! the result.

use crate::parse::{c_str, kstrtoll, kstrtoull, ParseError};
use crate::tokens::{next_arg, skip_spaces, sysfs_streq};

/// Which slots a writeback takes, besides being stored in the pool (never same-filled, never
/// written back already).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Filter {
    /// Only slots marked idle.
    pub idle: bool,
    /// Only huge slots.
    pub huge: bool,
    /// Only slots no algorithm could compress.
    pub incompressible: bool,
}

impl Filter {
    /// Every slot in the range (C's `PAGE_WRITEBACK`).
    pub const ANY: Self = Self {
        idle: false,
        huge: false,
        incompressible: false,
    };

    /// The mode words and their filters.
    const WORDS: [(&'static [u8], Self); 4] = [
        (
            b"idle",
            Self {
                idle: true,
                ..Self::ANY
            },
        ),
        (
            b"huge",
            Self {
                huge: true,
                ..Self::ANY
            },
        ),
        (
            b"huge_idle",
            Self {
                idle: true,
                huge: true,
                ..Self::ANY
            },
        ),
        (
            b"incompressible",
            Self {
                incompressible: true,
                ..Self::ANY
            },
        ),
    ];

    /// C 7.3's `parse_mode()`: a mode word, exactly.
    fn of_word(word: &[u8]) -> Option<Self> {
        Self::WORDS
            .iter()
            .find(|(w, _)| *w == word)
            .map(|&(_, filter)| filter)
    }
}

/// What a 6.12 `writeback` write asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request6_12 {
    /// Every slot that passes the filter.
    All(Filter),
    /// The one slot `page_index=N` names (not checked against the disk's size yet: C checks
    /// that after the initialisation check, with `EINVAL`).
    Page(u64),
}

/// A 6.12 `writeback` write: a mode word as `sysfs_streq` sees it, or `page_index=` and a
/// `kstrtol()` number (a negative one becomes a huge index, refused later as past the end).
/// Everything else is `EINVAL`, before any other check.
pub fn writeback_6_12(input: &[u8]) -> Result<Request6_12, ParseError> {
    let s = c_str(input);
    if let Some(&(_, filter)) = Filter::WORDS.iter().find(|(word, _)| sysfs_streq(s, word)) {
        return Ok(Request6_12::All(filter));
    }
    let number = s.strip_prefix(b"page_index=").ok_or(ParseError::Invalid)?;
    let index = kstrtoll(number, 10).map_err(|_| ParseError::Invalid)?;
    Ok(Request6_12::Page(index as u64))
}

/// One scan a 7.3 `writeback` write asks for: the slots `start..end` that pass `filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scan {
    /// The filter.
    pub filter: Filter,
    /// First slot.
    pub start: u64,
    /// One past the last slot.
    pub end: u64,
}

/// A 7.3 `writeback` write on a disk of `pages` slots, read as C 7.3 reads it (after its
/// initialisation and backing-device checks): `key=value` parameters in order. A mode word
/// alone (or with an empty value) or `type=MODE` scans the current range (the whole disk, or
/// the last index or range given) with that filter and ends the parsing; `page_index=N` scans
/// slot `N` with no filter and goes on; `page_indexes=A-B` scans `A..=B`; other keys are
/// ignored. `scan` gets each scan as it is read; on an error, the scans made so far must be
/// undone by the caller (C releases what they selected and writes nothing).
pub fn writeback_7_3(
    input: &[u8],
    pages: u64,
    mut scan: impl FnMut(Scan),
) -> Result<(), ParseError> {
    let mut args = skip_spaces(c_str(input));
    let (mut start, mut end) = (0, pages);
    while !args.is_empty() {
        let (arg, rest) = next_arg(args);
        args = rest;
        let mode = match arg.val {
            None | Some(b"") => Some(arg.param),
            Some(value) if arg.param == b"type" => Some(value),
            Some(_) => None,
        };
        if let Some(word) = mode {
            let filter = Filter::of_word(word).ok_or(ParseError::Invalid)?;
            scan(Scan { filter, start, end });
            return Ok(());
        }
        let value = arg.val.unwrap_or_default();
        match arg.param {
            b"page_index" => {
                let index = kstrtoull(value, 10)?;
                if index >= pages {
                    return Err(ParseError::Range);
                }
                (start, end) = (index, index + 1);
            }
            b"page_indexes" => {
                let dash = value
                    .iter()
                    .position(|&b| b == b'-')
                    .ok_or(ParseError::Invalid)?;
                let first = kstrtoull(&value[..dash], 10)?;
                if first >= pages {
                    return Err(ParseError::Range);
                }
                let last = kstrtoull(&value[dash + 1..], 10)?;
                if last >= pages || first > last {
                    return Err(ParseError::Range);
                }
                (start, end) = (first, last + 1);
            }
            _ => continue,
        }
        scan(Scan {
            filter: Filter::ANY,
            start,
            end,
        });
    }
    Ok(())
}
