// SPDX-License-Identifier: GPL-2.0
//! What the recompression attributes accept, per kernel, with C zram's errors:
//! `recomp_algorithm` (`algo=NAME [priority=N]`) and `recompress` (`type=`, `max_pages=`,
//! `threshold=`, `algo=`, `priority=` in any order), and which priorities a `recompress`
//! tries (6.12: a range of them, the lower first; 7.3: exactly one). Pure logic over the
//! written bytes, shared with the host crate; the device applies the result.

use crate::parse::{kstrtoint, kstrtouint, kstrtoull, ParseError};
use crate::slot::{Priority, MAX_PRIORITIES};
use crate::tokens::key_values;

/// A `recomp_algorithm` write: the algorithm's name (not looked up yet) and its priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecompAlgorithm<'a> {
    /// `algo=`.
    pub name: &'a [u8],
    /// `priority=`, 1 when not given.
    pub priority: Priority,
}

/// Parses a `recomp_algorithm` write as C (6.12 and 7.3 alike): `key=value` tokens, a key
/// without a value `EINVAL`, `priority` a `kstrtoint` number, unknown keys ignored, a later
/// token overriding an earlier one; then `EINVAL` without `algo` or for a priority outside
/// 1..=3.
pub fn recomp_algorithm(input: &[u8]) -> Result<RecompAlgorithm<'_>, ParseError> {
    let mut name = None;
    let mut priority = 1;
    for arg in key_values(input) {
        let (param, val) = arg?;
        match param {
            b"algo" => name = Some(val),
            b"priority" => priority = kstrtoint(val, 10)?,
            _ => {}
        }
    }
    let name = name.ok_or(ParseError::Invalid)?;
    let priority = u64::try_from(priority)
        .ok()
        .and_then(Priority::new)
        .filter(|&p| p != Priority::PRIMARY)
        .ok_or(ParseError::Invalid)?;
    Ok(RecompAlgorithm { name, priority })
}

/// Which slots a `recompress` takes (`type=`): idle ones, huge ones, or both conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mode {
    /// Only slots marked idle.
    pub idle: bool,
    /// Only huge slots.
    pub huge: bool,
}

/// A `recompress` write, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recompress<'a> {
    /// `type=`; on 6.12 an unknown type leaves it as it was.
    pub mode: Mode,
    /// `max_pages=`: how many pages may be tried (`u64::MAX` when not given).
    pub max_pages: u64,
    /// `threshold=`: only objects of at least this many bytes are recompressed, and only to
    /// fewer (0: no threshold).
    pub threshold: u32,
    /// `algo=`.
    pub algo: Option<&'a [u8]>,
    /// `priority=`, as written (6.12 reads it as a `kstrtouint`, 7.3 as a `kstrtoint`).
    pub priority: Option<i64>,
}

/// Parses a `recompress` write as C zram of the kernel built for: `key=value` tokens, a key
/// without a value `EINVAL`, numbers parsed as C does (`max_pages` `kstrtoull`, `threshold`
/// `kstrtouint`, `priority` `kstrtouint` on 6.12 and `kstrtoint` on 7.3), unknown keys
/// ignored. On 7.3 a `type=` that names no mode is `EINVAL` while no earlier one did.
pub fn recompress(input: &[u8], abi_7_3: bool) -> Result<Recompress<'_>, ParseError> {
    let mut request = Recompress {
        mode: Mode::default(),
        max_pages: u64::MAX,
        threshold: 0,
        algo: None,
        priority: None,
    };
    for arg in key_values(input) {
        let (param, val) = arg?;
        match param {
            b"type" => {
                match val {
                    b"idle" => {
                        request.mode = Mode {
                            idle: true,
                            huge: false,
                        }
                    }
                    b"huge" => {
                        request.mode = Mode {
                            idle: false,
                            huge: true,
                        }
                    }
                    b"huge_idle" => {
                        request.mode = Mode {
                            idle: true,
                            huge: true,
                        }
                    }
                    _ => {}
                }
                if abi_7_3 && request.mode == Mode::default() {
                    return Err(ParseError::Invalid);
                }
            }
            b"max_pages" => request.max_pages = kstrtoull(val, 10)?,
            b"threshold" => request.threshold = kstrtouint(val, 10)?,
            b"algo" => request.algo = Some(val),
            b"priority" => {
                request.priority = Some(if abi_7_3 {
                    i64::from(kstrtoint(val, 10)?)
                } else {
                    i64::from(kstrtouint(val, 10)?)
                })
            }
            _ => {}
        }
    }
    Ok(request)
}

/// The priorities a 6.12 `recompress` tries, lower first, given the name of the algorithm
/// configured at each priority (`None` where there is none): from `priority=` (0 meaning 1)
/// or 1, up to the one after it or to the last; with `algo=`, the first priority from there
/// whose algorithm has that name, alone (`None`, C's `EINVAL`, when none has). As C, a
/// priority of 4 or more leaves nothing to try; the caller skips priorities without an
/// algorithm.
pub fn priorities_6_12<'n>(
    request: &Recompress<'_>,
    configured: impl Fn(usize) -> Option<&'n [u8]>,
) -> Option<core::ops::Range<usize>> {
    const MAX: u64 = MAX_PRIORITIES as u64;
    let (mut first, mut end) = match request.priority {
        None => (1, MAX),
        Some(given) => {
            // `kstrtouint`: 0..=u32::MAX. C adds 1 in 32 bits: u32::MAX wraps to 0.
            let first = (given as u64).max(1);
            let after = (first as u32).wrapping_add(1);
            (first, u64::from(after).min(MAX))
        }
    };
    if let Some(name) = request.algo {
        let found = (first..MAX).find(|&p| configured(p as usize) == Some(name))?;
        first = found;
        end = (found + 1).min(MAX);
    }
    Some(first as usize..end.max(first) as usize)
}

/// The one priority a 7.3 `recompress` uses, given the name of the algorithm configured at
/// each priority: `priority=` (1..=3), checked against `algo=` when both are given; `algo=`
/// alone looks from priority 1 up; neither means 1. `None` (C's `EINVAL`) for a priority out
/// of range, a name that does not match, or a priority without an algorithm.
pub fn priority_7_3<'n>(
    request: &Recompress<'_>,
    configured: impl Fn(usize) -> Option<&'n [u8]>,
) -> Option<Priority> {
    let priority = match (request.priority, request.algo) {
        (Some(given), algo) => {
            let priority = u64::try_from(given)
                .ok()
                .and_then(Priority::new)
                .filter(|&p| p != Priority::PRIMARY)?;
            if let Some(name) = algo {
                (configured(priority.index()) == Some(name)).then_some(priority)?
            } else {
                priority
            }
        }
        (None, Some(name)) => Priority::all()
            .skip(1)
            .find(|p| configured(p.index()) == Some(name))?,
        (None, None) => Priority::SECONDARY,
    };
    configured(priority.index()).map(|_| priority)
}
