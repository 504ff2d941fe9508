// SPDX-License-Identifier: GPL-2.0
//! `recomp_algorithm` and `recompress` parsing, and the priorities a `recompress` tries, as C
//! zram 6.12 and 7.3 take them.

use proptest::prelude::*;
use zram_rs_logic::parse::ParseError;
use zram_rs_logic::recompress_args::{
    priorities_6_12, priority_7_3, recomp_algorithm, recompress, Mode,
};
use zram_rs_logic::slot::Priority;

fn prio(n: u64) -> Priority {
    Priority::new(n).unwrap()
}

#[test]
fn recomp_algorithm_takes_algo_and_priority() {
    let ok = |input: &str, name: &str, p: u64| {
        let parsed = recomp_algorithm(input.as_bytes()).unwrap();
        assert_eq!(
            (parsed.name, parsed.priority),
            (name.as_bytes(), prio(p)),
            "{input:?}"
        );
    };
    ok("algo=zstd", "zstd", 1);
    ok("algo=zstd\n", "zstd", 1);
    ok("  algo=zstd priority=2\n", "zstd", 2);
    ok("priority=3 algo=lz4hc", "lz4hc", 3);
    ok("foo=bar algo=lz4 algo=zstd", "zstd", 1);
    ok("algo=\"zstd\" priority=+2", "zstd", 2);
    let err = |input: &str, e: ParseError| {
        assert_eq!(recomp_algorithm(input.as_bytes()), Err(e), "{input:?}");
    };
    err("", ParseError::Invalid);
    err("\n", ParseError::Invalid);
    err("algo", ParseError::Invalid);
    err("algo=", ParseError::Invalid);
    err("priority=2", ParseError::Invalid);
    err("algo=zstd priority=0", ParseError::Invalid);
    err("algo=zstd priority=4", ParseError::Invalid);
    err("algo=zstd priority=-1", ParseError::Invalid);
    err("algo=zstd priority=x", ParseError::Invalid);
    err("algo=zstd priority=99999999999", ParseError::Range);
    // A bad token stops the parse before `algo` is missed.
    err("priority=99999999999", ParseError::Range);
}

#[test]
fn recompress_parses_as_each_kernel() {
    for v7 in [false, true] {
        let r = recompress(
            b"type=huge_idle max_pages=10 threshold=1000 algo=zstd priority=2\n",
            v7,
        )
        .unwrap();
        assert_eq!(
            r.mode,
            Mode {
                idle: true,
                huge: true
            }
        );
        assert_eq!(
            (r.max_pages, r.threshold, r.algo, r.priority),
            (10, 1000, Some(&b"zstd"[..]), Some(2))
        );
        let r = recompress(b"", v7).unwrap();
        assert_eq!(
            (r.mode, r.max_pages, r.threshold, r.algo, r.priority),
            (Mode::default(), u64::MAX, 0, None, None)
        );
        assert_eq!(recompress(b"type", v7), Err(ParseError::Invalid));
        assert_eq!(recompress(b"max_pages=", v7), Err(ParseError::Invalid));
        assert_eq!(recompress(b"max_pages=-1", v7), Err(ParseError::Invalid));
        assert_eq!(
            recompress(b"max_pages=99999999999999999999", v7),
            Err(ParseError::Range)
        );
        assert_eq!(
            recompress(b"threshold=4294967296", v7),
            Err(ParseError::Range)
        );
        assert_eq!(
            recompress(b"type=idle type=foo", v7).unwrap().mode,
            Mode {
                idle: true,
                huge: false
            }
        );
    }
    // An unknown type: no filter on 6.12, EINVAL on 7.3 (where no earlier type named a mode).
    assert_eq!(
        recompress(b"type=foo", false).unwrap().mode,
        Mode::default()
    );
    assert_eq!(recompress(b"type=foo", true), Err(ParseError::Invalid));
    // priority: kstrtouint on 6.12, kstrtoint on 7.3.
    assert_eq!(recompress(b"priority=-1", false), Err(ParseError::Invalid));
    assert_eq!(recompress(b"priority=-1", true).unwrap().priority, Some(-1));
    assert_eq!(
        recompress(b"priority=4294967295", false).unwrap().priority,
        Some(4294967295)
    );
    assert_eq!(
        recompress(b"priority=4294967295", true),
        Err(ParseError::Range)
    );
}

/// lzo-rle primary, zstd at 1, nothing at 2, lz4hc at 3.
fn configured(p: usize) -> Option<&'static [u8]> {
    [
        Some(&b"lzo-rle"[..]),
        Some(&b"zstd"[..]),
        None,
        Some(&b"lz4hc"[..]),
    ][p]
}

#[test]
fn priorities_6_12_follow_c() {
    let range = |input: &str| {
        let r = recompress(input.as_bytes(), false).unwrap();
        priorities_6_12(&r, configured)
    };
    assert_eq!(range(""), Some(1..4));
    assert_eq!(range("priority=0"), Some(1..2));
    assert_eq!(range("priority=2"), Some(2..3));
    assert_eq!(range("priority=3"), Some(3..4));
    assert_eq!(range("priority=7").map(|r| r.len()), Some(0));
    assert_eq!(range("priority=4294967295").map(|r| r.len()), Some(0));
    assert_eq!(range("algo=lz4hc"), Some(3..4));
    assert_eq!(range("algo=zstd"), Some(1..2));
    assert_eq!(range("algo=lzo-rle"), None);
    assert_eq!(range("algo=deflate"), None);
    assert_eq!(range("priority=2 algo=zstd"), None);
    assert_eq!(range("priority=1 algo=lz4hc"), Some(3..4));
    assert_eq!(range("algo=lz4hc priority=7"), None);
}

#[test]
fn priority_7_3_follows_c() {
    let one = |input: &str| {
        let r = recompress(input.as_bytes(), true).unwrap();
        priority_7_3(&r, configured).map(Priority::get)
    };
    assert_eq!(one(""), Some(1));
    assert_eq!(one("priority=3"), Some(3));
    assert_eq!(one("priority=2"), None);
    assert_eq!(one("priority=0"), None);
    assert_eq!(one("priority=4"), None);
    assert_eq!(one("priority=-1"), None);
    assert_eq!(one("algo=lz4hc"), Some(3));
    assert_eq!(one("algo=lzo-rle"), None);
    assert_eq!(one("priority=3 algo=lz4hc"), Some(3));
    assert_eq!(one("priority=3 algo=zstd"), None);
    let none_at_1 = |p: usize| [Some(&b"lzo-rle"[..]), None, None, Some(&b"lz4hc"[..])][p];
    let r = recompress(b"", true).unwrap();
    assert_eq!(priority_7_3(&r, none_at_1), None);
}

proptest! {
    /// Whatever the input, parsing never panics, and a priority 6.12 tries is one of 1..=3.
    #[test]
    fn any_recompress_input_is_safe(input in proptest::collection::vec(any::<u8>(), 0..64)) {
        for v7 in [false, true] {
            if let Ok(r) = recompress(&input, v7) {
                if let Some(range) = priorities_6_12(&r, configured) {
                    prop_assert!(range.start >= 1);
                    prop_assert!(range.end <= 4 || range.is_empty());
                }
                if let Some(p) = priority_7_3(&r, configured) {
                    prop_assert!(p.get() == 1 || p.get() == 3);
                }
            }
        }
        let _ = recomp_algorithm(&input);
    }
}
