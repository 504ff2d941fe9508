// SPDX-License-Identifier: GPL-2.0
//! How compression algorithms are named and picked: the `comp_algorithm` list (in the set's
//! order, the selected one in brackets, a trailing space) and name lookup with `sysfs_streq()`
//! semantics, over any set of [`Named`] algorithms (the module's is its table of backends in
//! `comp/`); and the `key=value` tokeniser of `algorithm_params` (the kernel's `next_arg()`,
//! quotes and all). Pure logic, shared with the host crate.

use core::fmt::{self, Write};

/// A set of compression algorithms known by name.
pub trait Named: Copy + PartialEq + 'static {
    /// Every algorithm, in the order `comp_algorithm` lists them.
    const ALL: &'static [Self];

    /// The name user space writes and reads.
    fn name(self) -> &'static str;
}

/// `sysfs_streq()`: equal, where either side may end with one newline the other lacks.
pub fn sysfs_streq(s1: &[u8], s2: &[u8]) -> bool {
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = 0;
    while at(s1, i) != 0 && at(s1, i) == at(s2, i) {
        i += 1;
    }
    let (c1, c2) = (at(s1, i), at(s2, i));
    c1 == c2
        || (c1 == 0 && c2 == b'\n' && at(s2, i + 1) == 0)
        || (c1 == b'\n' && at(s1, i + 1) == 0 && c2 == 0)
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

/// The kernel's `isspace()` (including Latin-1 NBSP, as its ctype table has it).
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0xa0)
}

/// `skip_spaces()`.
pub fn skip_spaces(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| !is_space(b)).unwrap_or(s.len());
    &s[start..]
}

/// One `key[=value]` token of a kernel-cmdline-style argument string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg<'a> {
    /// The key.
    pub param: &'a [u8],
    /// The value, `None` when there is no `=`.
    pub val: Option<&'a [u8]>,
}

/// The `key=value` tokens of a sysfs write (up to its first NUL), as C zram's attributes with
/// such arguments read them (`next_arg()` in a loop): each key with its value, or
/// `ParseError::Invalid` for a key without one (an empty value included), after which the
/// iteration ends.
pub fn key_values(input: &[u8]) -> KeyValues<'_> {
    KeyValues {
        args: skip_spaces(crate::parse::c_str(input)),
    }
}

/// The iterator of [`key_values`].
pub struct KeyValues<'a> {
    args: &'a [u8],
}

impl<'a> Iterator for KeyValues<'a> {
    type Item = Result<(&'a [u8], &'a [u8]), crate::parse::ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.args.is_empty() {
            return None;
        }
        let (arg, rest) = next_arg(self.args);
        self.args = rest;
        Some(match arg.val {
            Some(val) if !val.is_empty() => Ok((arg.param, val)),
            _ => {
                self.args = &[];
                Err(crate::parse::ParseError::Invalid)
            }
        })
    }
}

/// `next_arg()`: splits the first token off `args` (which must not start with a space) and
/// returns it with the rest, leading spaces skipped. Double quotes group spaces, and quotes
/// around a whole token or a whole value are dropped, exactly as the C function does.
pub fn next_arg(args: &[u8]) -> (Arg<'_>, &[u8]) {
    let (args, quoted) = match args.first() {
        Some(b'"') => (&args[1..], true),
        _ => (args, false),
    };
    let mut in_quote = quoted;
    let mut equals = 0;
    let mut i = 0;
    while i < args.len() && args[i] != 0 {
        if is_space(args[i]) && !in_quote {
            break;
        }
        if equals == 0 && args[i] == b'=' {
            equals = i;
        }
        if args[i] == b'"' {
            in_quote = !in_quote;
        }
        i += 1;
    }
    // C writes NULs into the buffer; a string then ends at the first NUL after its start.
    // `cut_last` is the `args[i-1] = '\0'` that removes a closing quote.
    let mut cut_last = false;
    let mut val_start = None;
    if equals != 0 {
        let mut start = equals + 1;
        if args.get(start) == Some(&b'"') {
            start += 1;
            if i > 0 && args[i - 1] == b'"' {
                cut_last = true;
            }
        }
        val_start = Some(start);
    }
    if quoted && i > 0 && args[i - 1] == b'"' {
        cut_last = true;
    }
    let string_end = |start: usize| -> usize {
        let mut end = i;
        if equals != 0 && start <= equals {
            end = end.min(equals);
        }
        if cut_last && start < i {
            end = end.min(i - 1);
        }
        end.max(start)
    };
    let param = &args[..string_end(0)];
    let val = val_start.map(|start| {
        let start = start.min(i);
        &args[start..string_end(start)]
    });
    let rest = if i < args.len() && args[i] != 0 {
        &args[i + 1..]
    } else {
        &args[i..]
    };
    (Arg { param, val }, skip_spaces(rest))
}

/// `ZCOMP_PARAM_NO_LEVEL` (7.x: `ZCOMP_PARAM_NOT_SET`): the algorithm's default level, and
/// any parameter not given.
pub const NO_LEVEL: i32 = i32::MIN;

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
    /// `deflate.winbits=N` (C 7.x; an unknown key, so ignored, on 6.12), or [`NO_LEVEL`].
    pub deflate_winbits: i32,
}

/// Parses an `algorithm_params` write as C zram 6.12 does: space-separated `key=value` tokens,
/// a key without a value is `Invalid`, `priority` and `level` are `kstrtoint` numbers, unknown
/// keys are ignored, and a later token overrides an earlier one.
pub fn parse_algorithm_params(
    input: &[u8],
) -> Result<AlgorithmParams<'_>, crate::parse::ParseError> {
    parse_algorithm_params_as(input, false)
}

/// Parses an `algorithm_params` write as C zram 7.x does: as 6.12, with `deflate.winbits` (a
/// `kstrtoint` number) among the keys.
pub fn parse_algorithm_params_7_3(
    input: &[u8],
) -> Result<AlgorithmParams<'_>, crate::parse::ParseError> {
    parse_algorithm_params_as(input, true)
}

fn parse_algorithm_params_as(
    input: &[u8],
    deflate_winbits: bool,
) -> Result<AlgorithmParams<'_>, crate::parse::ParseError> {
    let mut params = AlgorithmParams {
        priority: 0,
        priority_given: false,
        level: NO_LEVEL,
        algo: None,
        dict: None,
        deflate_winbits: NO_LEVEL,
    };
    for arg in key_values(input) {
        let (param, val) = arg?;
        match param {
            b"priority" => {
                params.priority = crate::parse::kstrtoint(val, 10)?;
                params.priority_given = true;
            }
            b"level" => params.level = crate::parse::kstrtoint(val, 10)?,
            b"deflate.winbits" if deflate_winbits => {
                params.deflate_winbits = crate::parse::kstrtoint(val, 10)?;
            }
            b"algo" => params.algo = Some(val),
            b"dict" => params.dict = Some(val),
            _ => {}
        }
    }
    Ok(params)
}
