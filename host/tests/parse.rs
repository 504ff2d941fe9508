//! The sysfs parsers against the behaviour of the kernel's C helpers.

use proptest::prelude::*;
use zram_rs_logic::parse::{
    kstrtobool, kstrtoint, kstrtou16, kstrtoull, memparse, memparse_7_3, ParseError,
};

#[test]
fn memparse_examples() {
    assert_eq!(memparse(b"0"), (0, 1));
    assert_eq!(memparse(b"4096"), (4096, 4));
    assert_eq!(memparse(b"64M\n"), (64 << 20, 3));
    assert_eq!(memparse(b"1g"), (1 << 30, 2));
    assert_eq!(memparse(b"2K"), (2048, 2));
    assert_eq!(memparse(b"1T"), (1 << 40, 2));
    assert_eq!(memparse(b"1P"), (1 << 50, 2));
    assert_eq!(memparse(b"1E"), (1 << 60, 2));
    assert_eq!(memparse(b"16E"), (0, 3), "wraps like C");
    assert_eq!(memparse(b"0x10"), (16, 4));
    assert_eq!(memparse(b"010"), (8, 3), "leading zero is octal");
    assert_eq!(memparse(b"0x"), (0, 1), "0x without a hex digit is octal 0");
    assert_eq!(memparse(b"09"), (0, 1), "9 is not an octal digit");
    assert_eq!(memparse(b""), (0, 0));
    assert_eq!(memparse(b"abc"), (0, 0));
    assert_eq!(memparse(b" 5"), (0, 0), "no leading whitespace skip");
    assert_eq!(memparse(b"-5"), (0, 0), "no sign");
    assert_eq!(memparse(b"12abc"), (12, 2), "trailing garbage ignored");
    assert_eq!(memparse(b"1\0M"), (1, 1), "stops at NUL");
    assert_eq!(
        memparse(b"18446744073709551616"),
        (0, 20),
        "2^64 wraps to 0"
    );
    assert_eq!(memparse(b"18446744073709551615"), (u64::MAX, 20));
}

#[test]
fn memparse_7_3_examples() {
    assert_eq!(memparse_7_3(b"64M\n"), (64 << 20, 3));
    assert_eq!(
        memparse_7_3(b"16E"),
        (u64::MAX, 3),
        "7.x saturates a suffix that overflows"
    );
    assert_eq!(
        memparse_7_3(b"18446744073709551616"),
        (u64::MAX, 20),
        "7.x saturates a number that overflows"
    );
    assert_eq!(
        memparse_7_3(b"99999999999999999999999"),
        (u64::MAX, 23),
        "and stays there"
    );
    assert_eq!(
        memparse_7_3(b"garbage"),
        (0, 0),
        "a suffix needs a number on 7.x"
    );
    assert_eq!(memparse(b"garbage"), (0, 1), "6.12 takes a lone suffix");
    assert_eq!(memparse_7_3(b"k"), (0, 0));
    assert_eq!(memparse_7_3(b"0k"), (0, 2));
    assert_eq!(memparse_7_3(b"0x10k"), (16 << 10, 5));
}

proptest! {
    /// 7.x's memparse is 6.12's wherever 6.12's does not overflow or take a lone suffix, and
    /// saturates where it overflows.
    #[test]
    fn memparse_7_3_saturates(n: u64, suffix in 0usize..7) {
        let letters = ["", "k", "M", "g", "T", "p", "E"];
        let text = format!("{n}{}", letters[suffix]);
        let shift = 10 * suffix as u32;
        let expected = n.checked_mul(1u64 << shift).unwrap_or(u64::MAX);
        prop_assert_eq!(memparse_7_3(text.as_bytes()), (expected, text.len()));
        if n.checked_mul(1u64 << shift).is_some() {
            prop_assert_eq!(memparse(text.as_bytes()), (expected, text.len()));
        }
    }
}

#[test]
fn kstrto_examples() {
    assert_eq!(kstrtoull(b"1", 10), Ok(1));
    assert_eq!(kstrtoull(b"+1\n", 10), Ok(1));
    assert_eq!(kstrtoull(b"1\n\n", 10), Err(ParseError::Invalid));
    assert_eq!(kstrtoull(b"", 10), Err(ParseError::Invalid));
    assert_eq!(kstrtoull(b"\n", 10), Err(ParseError::Invalid));
    assert_eq!(kstrtoull(b" 1", 10), Err(ParseError::Invalid));
    assert_eq!(kstrtoull(b"-1", 10), Err(ParseError::Invalid));
    assert_eq!(kstrtoull(b"0x10", 10), Err(ParseError::Invalid));
    assert_eq!(kstrtoull(b"0x10", 0), Ok(16));
    assert_eq!(kstrtoull(b"18446744073709551615", 10), Ok(u64::MAX));
    assert_eq!(
        kstrtoull(b"18446744073709551616", 10),
        Err(ParseError::Range)
    );
    assert_eq!(kstrtou16(b"65535", 10), Ok(65535));
    assert_eq!(kstrtou16(b"65536", 10), Err(ParseError::Range));
    assert_eq!(kstrtou16(b"0", 10), Ok(0));
    assert_eq!(kstrtoint(b"-1", 10), Ok(-1));
    assert_eq!(kstrtoint(b"-0", 10), Ok(0));
    assert_eq!(kstrtoint(b"2147483647", 10), Ok(i32::MAX));
    assert_eq!(kstrtoint(b"2147483648", 10), Err(ParseError::Range));
    assert_eq!(kstrtoint(b"-2147483648", 10), Ok(i32::MIN));
    assert_eq!(kstrtoint(b"-2147483649", 10), Err(ParseError::Range));
    assert_eq!(kstrtoint(b"--1", 10), Err(ParseError::Invalid));
    assert_eq!(kstrtoint(b"+-1", 10), Err(ParseError::Invalid));
    assert_eq!(kstrtoint(b"3\0garbage", 10), Ok(3));
}

proptest! {
    #[test]
    fn kstrtoull_reads_back_every_decimal(value: u64, newline: bool) {
        let text = format!("{value}{}", if newline { "\n" } else { "" });
        prop_assert_eq!(kstrtoull(text.as_bytes(), 10), Ok(value));
        prop_assert_eq!(memparse(text.as_bytes()), (value, value.to_string().len()));
    }

    #[test]
    fn kstrtoint_matches_i32_range(value: i64) {
        let expected = i32::try_from(value).map_err(|_| ParseError::Range);
        prop_assert_eq!(kstrtoint(value.to_string().as_bytes(), 10), expected);
    }

    #[test]
    fn memparse_suffix_is_a_shift(value in 0u64..(1 << 20), suffix in 0usize..6) {
        let letters = ["K", "M", "G", "T", "P", "E"];
        let text = format!("{value}{}", letters[suffix]);
        let expected = value.wrapping_shl(10 * (suffix as u32 + 1));
        prop_assert_eq!(memparse(text.as_bytes()).0, expected);
    }

    #[test]
    fn parsers_never_panic(input in proptest::collection::vec(any::<u8>(), 0..40)) {
        let _ = memparse(&input);
        let _ = kstrtoull(&input, 0);
        let _ = kstrtou16(&input, 10);
        let _ = kstrtoint(&input, 10);
    }

    #[test]
    fn kstrtoull_rejects_trailing_garbage(value: u32, garbage in "[ a-zA-Z!]{1,3}") {
        let text = format!("{value}{garbage}");
        prop_assert_eq!(kstrtoull(text.as_bytes(), 10), Err(ParseError::Invalid));
    }
}

/// C's `kstrtobool()`, written from its definition: the first byte, and the second after `o`.
fn kstrtobool_model(s: &[u8]) -> Option<bool> {
    let s = &s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())];
    match s.first()? {
        b'e' | b'E' | b'y' | b'Y' | b't' | b'T' | b'1' => Some(true),
        b'd' | b'D' | b'n' | b'N' | b'f' | b'F' | b'0' => Some(false),
        b'o' | b'O' => match s.get(1)? {
            b'n' | b'N' => Some(true),
            b'f' | b'F' => Some(false),
            _ => None,
        },
        _ => None,
    }
}

#[test]
fn kstrtobool_examples() {
    for (input, expected) in [
        (&b"1"[..], Some(true)),
        (b"0\n", Some(false)),
        (b"yes", Some(true)),
        (b"No", Some(false)),
        (b"on", Some(true)),
        (b"OFF", Some(false)),
        (b"o", None),
        (b"", None),
        (b"2", None),
        (b" 1", None),
        (b"true", Some(true)),
        (b"enable", Some(true)),
        (b"disable", Some(false)),
    ] {
        assert_eq!(kstrtobool(input).ok(), expected, "{input:?}");
    }
}

proptest! {
    #[test]
    fn kstrtobool_matches_c(input in proptest::collection::vec(any::<u8>(), 0..4)) {
        prop_assert_eq!(kstrtobool(&input).ok(), kstrtobool_model(&input));
    }
}
