// SPDX-License-Identifier: GPL-2.0
//! How compression algorithms are named and picked: the `comp_algorithm` list (in the set's
//! order, the selected one in brackets, a trailing space) and name lookup with `sysfs_streq()`
//! semantics, over any set of [`Named`] algorithms (the module's is its table of backends,
//! `comp/mod.rs`); and what an `algorithm_params` write asks for. Pure logic, shared with the
//! host crate.

use crate::parse::{kstrtoint, ParseError};
use crate::tokens::{key_values, sysfs_streq};
use core::fmt::{self, Write};

/// A set of compression algorithms known by name.
pub trait Named: Copy + PartialEq + 'static {
    /// Every algorithm, in the order `comp_algorithm` lists them.
    const ALL: &'static [Self];

    /// The name user space writes and reads.
    fn name(self) -> &'static str;
}

/// Longest name `comp_algorithm` accepts, plus one (`CRYPTO_MAX_ALG_NAME`).
pub const MAX_NAME: usize = 128;

/// Why a `comp_algorithm` write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// 128 bytes or longer (`-E2BIG`).
    TooLong,
    /// Not an algorithm of the set (`-EINVAL`).
    Unknown,
}

/// Parses a `comp_algorithm` write as C 6.12 does: at most 127 bytes, one trailing newline
/// removed, then compared with each name of the set by `sysfs_streq()` (which allows one more).
pub fn parse_name<A: Named>(input: &[u8]) -> Result<A, NameError> {
    parse_name_as(input, true)
}

/// Parses a `comp_algorithm` write as C 7.x does: as 6.12, but the input goes to
/// `sysfs_streq()` as written (one trailing newline allowed, not two).
pub fn parse_name_7_3<A: Named>(input: &[u8]) -> Result<A, NameError> {
    parse_name_as(input, false)
}

fn parse_name_as<A: Named>(input: &[u8], strip_newline: bool) -> Result<A, NameError> {
    let input = crate::parse::c_str(input);
    if input.len() >= MAX_NAME {
        return Err(NameError::TooLong);
    }
    let name = if strip_newline {
        input.strip_suffix(b"\n").unwrap_or(input)
    } else {
        input
    };
    A::ALL
        .iter()
        .copied()
        .find(|algorithm| sysfs_streq(name, algorithm.name().as_bytes()))
        .ok_or(NameError::Unknown)
}

/// Writes the `comp_algorithm` line: each name of the set followed by a space, the selected one
/// in brackets, then a newline.
pub fn write_list<A: Named>(out: &mut impl Write, selected: A) -> fmt::Result {
    for &algorithm in A::ALL {
        if algorithm == selected {
            write!(out, "[{}] ", algorithm.name())?;
        } else {
            write!(out, "{} ", algorithm.name())?;
        }
    }
    writeln!(out)
}

/// `ZCOMP_PARAM_NO_LEVEL` (7.x: `ZCOMP_PARAM_NOT_SET`): the algorithm's default level, and
/// any parameter not given.
pub const NO_LEVEL: i32 = i32::MIN;

/// The most backend parameters (keys such as `deflate.winbits`) a kernel's `algorithm_params`
/// knows.
pub const MAX_BACKEND_KEYS: usize = 4;

/// What an `algorithm_params` write asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlgorithmParams<'a> {
    /// `priority=N`: which compressor (0 is the primary one).
    pub priority: i32,
    /// Whether `priority=` was written (7.x checks the priority only then).
    pub priority_given: bool,
    /// `level=N`, or [`NO_LEVEL`].
    pub level: i32,
    /// `algo=NAME`: selects the priority whose configured algorithm is NAME.
    pub algo: Option<&'a [u8]>,
    /// `dict=PATH`.
    pub dict: Option<&'a [u8]>,
    /// The value of each backend parameter the parse knew (`keys` of
    /// [`parse_algorithm_params`], in their order), or [`NO_LEVEL`].
    pub backend: [i32; MAX_BACKEND_KEYS],
}

/// Parses an `algorithm_params` write as C zram does: space-separated `key=value` tokens, a key
/// without a value is `Invalid`; `priority`, `level` and the backend parameters `keys` (the
/// kernel's: none on 6.12, `deflate.winbits` on 7.x; at most [`MAX_BACKEND_KEYS`]) are
/// `kstrtoint` numbers; other keys are ignored, and a later token overrides an earlier one.
pub fn parse_algorithm_params<'a>(
    input: &'a [u8],
    keys: &[&str],
) -> Result<AlgorithmParams<'a>, ParseError> {
    let mut params = AlgorithmParams {
        priority: 0,
        priority_given: false,
        level: NO_LEVEL,
        algo: None,
        dict: None,
        backend: [NO_LEVEL; MAX_BACKEND_KEYS],
    };
    for arg in key_values(input) {
        let (param, val) = arg?;
        match param {
            b"priority" => {
                params.priority = kstrtoint(val, 10)?;
                params.priority_given = true;
            }
            b"level" => params.level = kstrtoint(val, 10)?,
            b"algo" => params.algo = Some(val),
            b"dict" => params.dict = Some(val),
            _ => {
                let known = keys.iter().position(|key| key.as_bytes() == param);
                if let Some(value) = known.and_then(|i| params.backend.get_mut(i)) {
                    *value = kstrtoint(val, 10)?;
                }
            }
        }
    }
    Ok(params)
}
