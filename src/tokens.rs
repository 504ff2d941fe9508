// SPDX-License-Identifier: GPL-2.0
//! How the kernel reads a sysfs write as words, exactly as the C helpers C zram calls:
//! `sysfs_streq()` (one trailing newline ignored), `skip_spaces()`, and `next_arg()`, the
//! kernel command line's `key[=value]` tokeniser (quotes and all), with [`key_values`], the loop
//! C zram's `key=value` attributes (`algorithm_params`, `recomp_algorithm`, `recompress`,
//! 7.3's `writeback`) run over it. Pure logic, shared with the host crate.

use crate::parse::{c_str, ParseError};

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
        args: skip_spaces(c_str(input)),
    }
}

/// The iterator of [`key_values`].
pub struct KeyValues<'a> {
    args: &'a [u8],
}

impl<'a> Iterator for KeyValues<'a> {
    type Item = Result<(&'a [u8], &'a [u8]), ParseError>;

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
                Err(ParseError::Invalid)
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
