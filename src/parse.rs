// SPDX-License-Identifier: GPL-2.0
//! Parsing of sysfs input with the exact semantics of the kernel's C helpers that C zram uses:
//! `memparse()` (sizes with K/M/G/T/P/E suffixes), `kstrtoull()`, `kstrtou16()`, `kstrtoint()`
//! and `kstrtobool()`.
//!
//! Matching them byte for byte is what makes zram_rs return the same errno as C zram for the same
//! input. This file uses only `core`, so it is compiled both into the module and into the host
//! crate, where it is tested against a reference model.

/// Why a `kstrto*` parse failed; the errno C returns for each is in the variant's doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// Not a number, or trailing garbage (`-EINVAL`).
    Invalid,
    /// The number does not fit the target type (`-ERANGE`).
    Range,
}

/// Cuts `input` at its first NUL byte, as C sees a sysfs buffer (a NUL-terminated string).
pub fn c_str(input: &[u8]) -> &[u8] {
    match input.iter().position(|&b| b == 0) {
        Some(end) => &input[..end],
        None => input,
    }
}

fn digit_value(byte: u8) -> Option<u64> {
    match byte {
        b'0'..=b'9' => Some(u64::from(byte - b'0')),
        b'a'..=b'f' => Some(u64::from(byte - b'a' + 10)),
        b'A'..=b'F' => Some(u64::from(byte - b'A' + 10)),
        _ => None,
    }
}

/// `_parse_integer_fixup_radix()`: resolves base 0 from the prefix and skips a `0x` for base 16.
/// Returns the base and the number of prefix bytes to skip.
fn fixup_radix(s: &[u8], base: u32) -> (u32, usize) {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut base = base;
    if base == 0 {
        base = if at(0) == b'0' {
            if at(1).eq_ignore_ascii_case(&b'x') && at(2).is_ascii_hexdigit() {
                16
            } else {
                8
            }
        } else {
            10
        };
    }
    let skip = if base == 16 && at(0) == b'0' && at(1).eq_ignore_ascii_case(&b'x') {
        2
    } else {
        0
    };
    (base, skip)
}

/// `_parse_integer()`: the value (wrapping like C on overflow), the digits consumed, and whether
/// it overflowed.
fn parse_digits(s: &[u8], base: u32) -> (u64, usize, bool) {
    let base = u64::from(base);
    let mut value: u64 = 0;
    let mut overflow = false;
    let mut consumed = 0;
    for &byte in s {
        let Some(digit) = digit_value(byte) else {
            break;
        };
        if digit >= base {
            break;
        }
        if value & (!0u64 << 60) != 0 && value > (u64::MAX - digit) / base {
            overflow = true;
        }
        value = value.wrapping_mul(base).wrapping_add(digit);
        consumed += 1;
    }
    (value, consumed, overflow)
}

/// `memparse()`: a number in base 0 (decimal, `0x` hex or `0` octal), then at most one suffix
/// K, M, G, T, P or E (either case) multiplying by 1024 per step. Overflow wraps as in C, and
/// whatever follows is ignored. Returns the value and how many bytes were parsed.
pub fn memparse(input: &[u8]) -> (u64, usize) {
    memparse_as(input, false)
}

/// `memparse()` of 7.x: as 6.12's, except that a number or a suffix that overflows gives
/// `u64::MAX` rather than wrapping, and a suffix counts only after a number (a lone `k` parses
/// nothing).
pub fn memparse_7_3(input: &[u8]) -> (u64, usize) {
    memparse_as(input, true)
}

fn memparse_as(input: &[u8], saturate: bool) -> (u64, usize) {
    let s = c_str(input);
    let (base, skip) = fixup_radix(s, 0);
    let (mut value, digits, overflow) = parse_digits(&s[skip..], base);
    if saturate && overflow {
        value = u64::MAX;
    }
    let mut end = skip + digits;
    let shifts = match s.get(end).map(u8::to_ascii_lowercase) {
        Some(b'k') => 1,
        Some(b'm') => 2,
        Some(b'g') => 3,
        Some(b't') => 4,
        Some(b'p') => 5,
        Some(b'e') => 6,
        _ => 0,
    };
    if shifts > 0 && !(saturate && end == 0) {
        let shifted = value.wrapping_shl(10 * shifts);
        value = if saturate && shifted >> (10 * shifts) != value {
            u64::MAX
        } else {
            shifted
        };
        end += 1;
    }
    (value, end)
}

/// `_kstrtoull()`: digits in `base`, then one optional newline, then the end of the string.
fn kstrtoull_unsigned(s: &[u8], base: u32) -> Result<u64, ParseError> {
    let (base, skip) = fixup_radix(s, base);
    let rest = &s[skip..];
    let (value, digits, overflow) = parse_digits(rest, base);
    if overflow {
        return Err(ParseError::Range);
    }
    if digits == 0 {
        return Err(ParseError::Invalid);
    }
    match &rest[digits..] {
        [] | [b'\n'] => Ok(value),
        _ => Err(ParseError::Invalid),
    }
}

/// `kstrtoull()`: an optional leading `+`, the number, an optional trailing newline.
pub fn kstrtoull(input: &[u8], base: u32) -> Result<u64, ParseError> {
    let s = c_str(input);
    let s = s.strip_prefix(b"+").unwrap_or(s);
    kstrtoull_unsigned(s, base)
}

/// `kstrtou16()`.
pub fn kstrtou16(input: &[u8], base: u32) -> Result<u16, ParseError> {
    let value = kstrtoull(input, base)?;
    u16::try_from(value).map_err(|_| ParseError::Range)
}

/// `kstrtouint()`.
pub fn kstrtouint(input: &[u8], base: u32) -> Result<u32, ParseError> {
    let value = kstrtoull(input, base)?;
    u32::try_from(value).map_err(|_| ParseError::Range)
}

/// `kstrtoll()`: like `kstrtoull()` with an optional leading `-`.
pub fn kstrtoll(input: &[u8], base: u32) -> Result<i64, ParseError> {
    let s = c_str(input);
    if let Some(magnitude) = s.strip_prefix(b"-") {
        let value = kstrtoull_unsigned(magnitude, base)?;
        let negated = value.wrapping_neg() as i64;
        if negated > 0 {
            return Err(ParseError::Range);
        }
        Ok(negated)
    } else {
        let value = kstrtoull(s, base)?;
        i64::try_from(value).map_err(|_| ParseError::Range)
    }
}

/// `kstrtoint()`.
pub fn kstrtoint(input: &[u8], base: u32) -> Result<i32, ParseError> {
    let value = kstrtoll(input, base)?;
    i32::try_from(value).map_err(|_| ParseError::Range)
}

/// `kstrtobool()`: the first character decides (`y`, `t`, `e`, `1` and `on` are true; `n`,
/// `f`, `d`, `0` and `off` false, in either case); whatever follows it is ignored. (The module
/// uses it for 7.x's `compressed_writeback` only.)
#[allow(dead_code)]
pub fn kstrtobool(input: &[u8]) -> Result<bool, ParseError> {
    let s = c_str(input);
    match s.first().map(u8::to_ascii_lowercase) {
        Some(b'e' | b'y' | b't' | b'1') => Ok(true),
        Some(b'd' | b'n' | b'f' | b'0') => Ok(false),
        Some(b'o') => match s.get(1).map(u8::to_ascii_lowercase) {
            Some(b'n') => Ok(true),
            Some(b'f') => Ok(false),
            _ => Err(ParseError::Invalid),
        },
        _ => Err(ParseError::Invalid),
    }
}
