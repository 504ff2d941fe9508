// SPDX-License-Identifier: GPL-2.0
//! The compression algorithms zram offers, by name, and the text of the attributes that pick
//! and tune them: the `comp_algorithm` list (C zram's order, the selected one in brackets, a
//! trailing space), name lookup with `sysfs_streq()` semantics, and the `key=value` tokeniser
//! of `algorithm_params` (the kernel's `next_arg()`, quotes and all). Pure logic, shared with
//! the host crate.

use core::fmt::{self, Write};

/// A compression algorithm, in the order C zram lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    LzoRle,
    Lzo,
    Lz4,
    Lz4hc,
    Zstd,
    Deflate,
    Sw842,
}

impl Algorithm {
    /// Every algorithm, in `comp_algorithm`'s order.
    pub const ALL: [Algorithm; 7] = [
        Algorithm::LzoRle,
        Algorithm::Lzo,
        Algorithm::Lz4,
        Algorithm::Lz4hc,
        Algorithm::Zstd,
        Algorithm::Deflate,
        Algorithm::Sw842,
    ];

    /// The default, as in C zram's default configuration.
    pub const DEFAULT: Algorithm = Algorithm::LzoRle;

    /// The name user space writes and reads.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::LzoRle => "lzo-rle",
            Algorithm::Lzo => "lzo",
            Algorithm::Lz4 => "lz4",
            Algorithm::Lz4hc => "lz4hc",
            Algorithm::Zstd => "zstd",
            Algorithm::Deflate => "deflate",
            Algorithm::Sw842 => "842",
        }
    }
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
    /// Not an available algorithm (`-EINVAL`).
    Unknown,
}

/// Parses a `comp_algorithm` write as C does: at most 127 bytes, one trailing newline removed,
/// then compared with each available name by `sysfs_streq()`.
pub fn parse_name(
    input: &[u8],
    available: impl Fn(Algorithm) -> bool,
) -> Result<Algorithm, NameError> {
    let input = crate::parse::c_str(input);
    if input.len() >= MAX_NAME {
        return Err(NameError::TooLong);
    }
    let name = input.strip_suffix(b"\n").unwrap_or(input);
    Algorithm::ALL
        .into_iter()
        .filter(|&algorithm| available(algorithm))
        .find(|algorithm| sysfs_streq(name, algorithm.name().as_bytes()))
        .ok_or(NameError::Unknown)
}

/// Writes the `comp_algorithm` line: each available name followed by a space, the selected one
/// in brackets, then a newline.
pub fn write_list(
    out: &mut impl Write,
    selected: Algorithm,
    available: impl Fn(Algorithm) -> bool,
) -> fmt::Result {
    for algorithm in Algorithm::ALL.into_iter().filter(|&a| available(a)) {
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

/// `ZCOMP_PARAM_NO_LEVEL`: the algorithm's default level.
pub const NO_LEVEL: i32 = i32::MIN;

/// What an `algorithm_params` write asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlgorithmParams<'a> {
    /// `priority=N`: which compressor (0 is the primary one).
    pub priority: i32,
    /// `level=N`, or [`NO_LEVEL`].
    pub level: i32,
    /// `algo=NAME`: selects the priority whose configured algorithm is NAME.
    pub algo: Option<&'a [u8]>,
    /// `dict=PATH`.
    pub dict: Option<&'a [u8]>,
}

/// Parses an `algorithm_params` write as C zram 6.12 does: space-separated `key=value` tokens,
/// a key without a value is `Invalid`, `priority` and `level` are `kstrtoint` numbers, unknown
/// keys are ignored, and a later token overrides an earlier one.
pub fn parse_algorithm_params(
    input: &[u8],
) -> Result<AlgorithmParams<'_>, crate::parse::ParseError> {
    let mut params = AlgorithmParams {
        priority: 0,
        level: NO_LEVEL,
        algo: None,
        dict: None,
    };
    let mut args = skip_spaces(crate::parse::c_str(input));
    while !args.is_empty() {
        let (arg, rest) = next_arg(args);
        args = rest;
        let val = match arg.val {
            Some(val) if !val.is_empty() => val,
            _ => return Err(crate::parse::ParseError::Invalid),
        };
        match arg.param {
            b"priority" => params.priority = crate::parse::kstrtoint(val, 10)?,
            b"level" => params.level = crate::parse::kstrtoint(val, 10)?,
            b"algo" => params.algo = Some(val),
            b"dict" => params.dict = Some(val),
            _ => {}
        }
    }
    Ok(params)
}
