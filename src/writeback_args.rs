// SPDX-License-Identifier: GPL-2.0
//! What the post-processing attributes accept, per kernel, with C zram's errors: `writeback`
//! (6.12: one mode word or `page_index=N`; 7.3: `key=value` parameters that select ranges of
//! slots, each scanned as it is read) and `idle` (`all`, or an age in seconds, which 7.3
//! takes as a `u32` and ignores at or beyond the uptime). Pure logic over the written bytes,
//! shared with the host crate; the device applies the result.

use crate::algorithm::{next_arg, skip_spaces, sysfs_streq};
use crate::parse::{c_str, kstrtoll, kstrtoull, ParseError};

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

/// A `writeback` write refused, with C's errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `-EINVAL`.
    Invalid,
    /// `-ERANGE` (7.3: an index past the disk's end).
    Range,
}

impl From<ParseError> for Refused {
    fn from(e: ParseError) -> Self {
        match e {
            ParseError::Invalid => Refused::Invalid,
            ParseError::Range => Refused::Range,
        }
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
pub fn writeback_6_12(input: &[u8]) -> Result<Request6_12, Refused> {
    let s = c_str(input);
    if let Some(&(_, filter)) = Filter::WORDS.iter().find(|(word, _)| sysfs_streq(s, word)) {
        return Ok(Request6_12::All(filter));
    }
    let number = s.strip_prefix(b"page_index=").ok_or(Refused::Invalid)?;
    let index = kstrtoll(number, 10).map_err(|_| Refused::Invalid)?;
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
pub fn writeback_7_3(input: &[u8], pages: u64, mut scan: impl FnMut(Scan)) -> Result<(), Refused> {
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
            let filter = Filter::of_word(word).ok_or(Refused::Invalid)?;
            scan(Scan { filter, start, end });
            return Ok(());
        }
        let value = arg.val.unwrap_or_default();
        match arg.param {
            b"page_index" => {
                let index = kstrtoull(value, 10)?;
                if index >= pages {
                    return Err(Refused::Range);
                }
                (start, end) = (index, index + 1);
            }
            b"page_indexes" => {
                let dash = value
                    .iter()
                    .position(|&b| b == b'-')
                    .ok_or(Refused::Invalid)?;
                let first = kstrtoull(&value[..dash], 10)?;
                if first >= pages {
                    return Err(Refused::Range);
                }
                let last = kstrtoull(&value[dash + 1..], 10)?;
                if last >= pages || first > last {
                    return Err(Refused::Range);
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

/// What an `idle` write asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// `all`: mark every slot in the pool idle.
    All,
    /// Mark the slots not accessed for at least this many seconds idle, and unmark the others.
    OlderThan(u64),
}

/// An `idle` write on 6.12 (with access times): `all` or a `kstrtoull()` number of any base;
/// else `EINVAL`, before the initialisation check.
pub fn idle_6_12(input: &[u8]) -> Result<Idle, Refused> {
    let s = c_str(input);
    if sysfs_streq(s, b"all") {
        return Ok(Idle::All);
    }
    kstrtoull(s, 0)
        .map(Idle::OlderThan)
        .map_err(|_| Refused::Invalid)
}

/// An `idle` write on 7.3 (with access times): `all` or a `kstrtouint()` number of any base,
/// else `EINVAL`; `None` for an age at or beyond `uptime` seconds, which C 7.3 accepts without
/// doing anything (not even the initialisation check).
pub fn idle_7_3(input: &[u8], uptime: u64) -> Result<Option<Idle>, Refused> {
    let s = c_str(input);
    if sysfs_streq(s, b"all") {
        return Ok(Some(Idle::All));
    }
    let age = kstrtoull(s, 0).map_err(|_| Refused::Invalid)?;
    let age = u32::try_from(age).map_err(|_| Refused::Invalid)?;
    Ok((u64::from(age) < uptime).then_some(Idle::OlderThan(u64::from(age))))
}

/// Nanoseconds in a second.
const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Which slots an `idle` write marks, from their last access time (whole seconds since boot,
/// as the slot keeps it): C's `cutoff`, in nanoseconds of boot time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cutoff {
    /// `all` (or C's cutoff of 0, which means the same): every slot holding an object.
    All,
    /// The slots last accessed before this boot time: marked idle; the others are unmarked.
    Before(i64),
}

impl Cutoff {
    /// C 6.12's cutoff for `idle` at boot time `now_ns`: `now - age * NSEC_PER_SEC` in its
    /// `ktime_t` arithmetic, which wraps for ages beyond about 584 years (the product is a
    /// `u64`) and is then whatever the wrapped value says, as in C. A cutoff of 0 is `all`.
    pub fn of_6_12(idle: Idle, now_ns: u64) -> Self {
        match idle {
            Idle::All => Self::All,
            Idle::OlderThan(age) => {
                let cutoff = (now_ns as i64).wrapping_sub(age.wrapping_mul(NSEC_PER_SEC) as i64);
                if cutoff == 0 {
                    Self::All
                } else {
                    Self::Before(cutoff)
                }
            }
        }
    }

    /// C 7.3's cutoff for `idle` at `uptime` seconds: `uptime - age` seconds, for an age below
    /// the uptime (what [`idle_7_3`] returns).
    pub fn of_7_3(idle: Idle, uptime: u64) -> Self {
        match idle {
            Idle::All => Self::All,
            Idle::OlderThan(age) => match uptime.checked_sub(age) {
                // Below 2^63 nanoseconds for any uptime C's `u32` ages leave.
                Some(seconds) if seconds > 0 => {
                    Self::Before(seconds.saturating_mul(NSEC_PER_SEC).min(i64::MAX as u64) as i64)
                }
                _ => Self::All,
            },
        }
    }

    /// Whether a slot holding an object, last accessed at `access` seconds of boot time, is
    /// idle under this cutoff (C's `ktime_after(cutoff, ac_time)`, or `cutoff > ac_time` in
    /// seconds on 7.3).
    pub fn is_idle(self, access: u32) -> bool {
        match self {
            Self::All => true,
            Self::Before(cutoff) => cutoff > i64::from(access) * NSEC_PER_SEC as i64,
        }
    }
}
