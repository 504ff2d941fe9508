//! Algorithm names, the comp_algorithm list and the algorithm_params tokeniser.

use proptest::prelude::*;
use zram_rs_logic::algorithm::{
    parse_algorithm_params, parse_name, parse_name_7_3, write_list, NameError, Named,
    MAX_BACKEND_KEYS, NO_LEVEL,
};
use zram_rs_logic::parse::ParseError;
use zram_rs_logic::tokens::{next_arg, sysfs_streq};

/// C zram's algorithms in its order, as the module's table of backends (`src/comp/`) has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    LzoRle,
    Lzo,
    Lz4,
    Lz4hc,
    Zstd,
    Deflate,
    Sw842,
}

impl Named for Algorithm {
    const ALL: &'static [Self] = &[
        Algorithm::LzoRle,
        Algorithm::Lzo,
        Algorithm::Lz4,
        Algorithm::Lz4hc,
        Algorithm::Zstd,
        Algorithm::Deflate,
        Algorithm::Sw842,
    ];

    fn name(self) -> &'static str {
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

/// Debian 13's kernel: C zram configured without lzo and 842 (the module's table then has
/// neither backend).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Debian {
    Lz4,
    Lz4hc,
    Zstd,
    Deflate,
}

impl Named for Debian {
    const ALL: &'static [Self] = &[Debian::Lz4, Debian::Lz4hc, Debian::Zstd, Debian::Deflate];

    fn name(self) -> &'static str {
        match self {
            Debian::Lz4 => "lz4",
            Debian::Lz4hc => "lz4hc",
            Debian::Zstd => "zstd",
            Debian::Deflate => "deflate",
        }
    }
}

#[test]
fn list_matches_c_format() {
    let mut text = String::new();
    write_list(&mut text, Algorithm::LzoRle).unwrap();
    assert_eq!(text, "[lzo-rle] lzo lz4 lz4hc zstd deflate 842 \n");
    let mut text = String::new();
    write_list(&mut text, Algorithm::Zstd).unwrap();
    assert_eq!(text, "lzo-rle lzo lz4 lz4hc [zstd] deflate 842 \n");
    let mut text = String::new();
    write_list(&mut text, Debian::Lz4).unwrap();
    assert_eq!(text, "[lz4] lz4hc zstd deflate \n");
}

#[test]
fn names_parse_like_c() {
    assert_eq!(parse_name(b"lz4"), Ok(Algorithm::Lz4));
    assert_eq!(parse_name(b"lz4\n"), Ok(Algorithm::Lz4));
    assert_eq!(
        parse_name(b"lz4\n\n"),
        Ok(Algorithm::Lz4),
        "one newline stripped, one tolerated"
    );
    assert_eq!(
        parse_name::<Algorithm>(b"lz4\n\n\n"),
        Err(NameError::Unknown)
    );
    assert_eq!(parse_name(b"842"), Ok(Algorithm::Sw842));
    assert_eq!(parse_name(b"lzo-rle"), Ok(Algorithm::LzoRle));
    assert_eq!(parse_name::<Algorithm>(b"LZ4"), Err(NameError::Unknown));
    assert_eq!(parse_name::<Algorithm>(b" lz4"), Err(NameError::Unknown));
    assert_eq!(parse_name::<Algorithm>(b""), Err(NameError::Unknown));
    assert_eq!(parse_name::<Algorithm>(b"\n"), Err(NameError::Unknown));
    assert_eq!(
        parse_name::<Debian>(b"842"),
        Err(NameError::Unknown),
        "an algorithm the kernel lacks is unknown"
    );
    assert_eq!(
        parse_name::<Algorithm>(&[b'a'; 127]),
        Err(NameError::Unknown)
    );
    assert_eq!(
        parse_name::<Algorithm>(&[b'a'; 128]),
        Err(NameError::TooLong)
    );
    assert_eq!(parse_name(b"zstd\0garbage"), Ok(Algorithm::Zstd));
}

#[test]
fn streq_edges() {
    assert!(sysfs_streq(b"a", b"a"));
    assert!(sysfs_streq(b"a\n", b"a"));
    assert!(sysfs_streq(b"a", b"a\n"));
    assert!(sysfs_streq(b"a\n", b"a\n"));
    assert!(!sysfs_streq(b"a\n\n", b"a"));
    assert!(!sysfs_streq(b"ab", b"a"));
    assert!(sysfs_streq(b"", b""));
    assert!(sysfs_streq(b"", b"\n"));
}

#[test]
fn next_arg_like_the_kernel() {
    let (arg, rest) = next_arg(b"algo=zstd level=8");
    assert_eq!(
        (arg.param, arg.val, rest),
        (&b"algo"[..], Some(&b"zstd"[..]), &b"level=8"[..])
    );
    let (arg, rest) = next_arg(b"level");
    assert_eq!((arg.param, arg.val, rest), (&b"level"[..], None, &b""[..]));
    let (arg, _) = next_arg(b"dict=\"/a b/c\"");
    assert_eq!((arg.param, arg.val), (&b"dict"[..], Some(&b"/a b/c"[..])));
    let (arg, _) = next_arg(b"\"x=y z\"");
    assert_eq!((arg.param, arg.val), (&b"x"[..], Some(&b"y z"[..])));
    let (arg, _) = next_arg(b"=v");
    assert_eq!(
        (arg.param, arg.val),
        (&b"=v"[..], None),
        "an '=' at position 0 does not split"
    );
    let (arg, _) = next_arg(b"k=");
    assert_eq!((arg.param, arg.val), (&b"k"[..], Some(&b""[..])));
    let (arg, _) = next_arg(b"k=\"");
    assert_eq!((arg.param, arg.val), (&b"k"[..], Some(&b""[..])));
    let (arg, rest) = next_arg(b"a=b   \t c=d");
    assert_eq!(
        (arg.param, arg.val, rest),
        (&b"a"[..], Some(&b"b"[..]), &b"c=d"[..])
    );
}

#[test]
fn names_like_c_7_3() {
    assert_eq!(parse_name_7_3(b"lz4"), Ok(Algorithm::Lz4));
    assert_eq!(parse_name_7_3(b"lz4\n"), Ok(Algorithm::Lz4));
    // 7.x gives the write to sysfs_streq() as it is: one newline, not two.
    assert_eq!(
        parse_name_7_3::<Algorithm>(b"lz4\n\n"),
        Err(NameError::Unknown)
    );
    assert_eq!(
        parse_name_7_3::<Algorithm>(&[b'a'; 128]),
        Err(NameError::TooLong)
    );
}

/// The backend parameters C zram 7.3's `algorithm_params` knows.
const KEYS_7_3: &[&str] = &["deflate.winbits"];

#[test]
fn algorithm_params_like_c_7_3() {
    let p = parse_algorithm_params(b"deflate.winbits=-12 level=2", KEYS_7_3).unwrap();
    assert_eq!((p.backend[0], p.level, p.priority_given), (-12, 2, false));
    assert_eq!(&p.backend[1..], &[NO_LEVEL; MAX_BACKEND_KEYS - 1]);
    let p = parse_algorithm_params(b"priority=0", KEYS_7_3).unwrap();
    assert_eq!((p.priority, p.priority_given), (0, true));
    assert_eq!(p.backend, [NO_LEVEL; MAX_BACKEND_KEYS]);
    assert_eq!(
        parse_algorithm_params(b"deflate.winbits=x", KEYS_7_3).unwrap_err(),
        ParseError::Invalid
    );
    // The second key of a list gets the second value.
    let p = parse_algorithm_params(b"b.y=5 a.x=4 b.y=6", &["a.x", "b.y"]).unwrap();
    assert_eq!(&p.backend[..2], &[4, 6]);
    // 6.12 does not know the key: ignored.
    let p = parse_algorithm_params(b"deflate.winbits=x", &[]).unwrap();
    assert_eq!(p.backend, [NO_LEVEL; MAX_BACKEND_KEYS]);
}

#[test]
fn algorithm_params_like_c() {
    let p = parse_algorithm_params(b"algo=zstd level=8\n", &[]).unwrap();
    assert_eq!(
        (p.priority, p.level, p.algo, p.dict),
        (0, 8, Some(&b"zstd"[..]), None)
    );
    let p = parse_algorithm_params(b"  priority=1 unknown=3 dict=/x", &[]).unwrap();
    assert_eq!(
        (p.priority, p.level, p.dict),
        (1, NO_LEVEL, Some(&b"/x"[..]))
    );
    assert_eq!(
        parse_algorithm_params(b"level", &[]).unwrap_err(),
        ParseError::Invalid
    );
    assert_eq!(
        parse_algorithm_params(b"level=", &[]).unwrap_err(),
        ParseError::Invalid
    );
    assert_eq!(
        parse_algorithm_params(b"level=x", &[]).unwrap_err(),
        ParseError::Invalid
    );
    assert_eq!(
        parse_algorithm_params(b"level=99999999999", &[]).unwrap_err(),
        ParseError::Range
    );
    assert_eq!(
        parse_algorithm_params(b"unknown", &[]).unwrap_err(),
        ParseError::Invalid
    );
    let p = parse_algorithm_params(b"", &[]).unwrap();
    assert_eq!((p.priority, p.level), (0, NO_LEVEL));
    let p = parse_algorithm_params(b"level=1 level=-3", &[]).unwrap();
    assert_eq!(p.level, -3);
}

proptest! {
    #[test]
    fn tokeniser_never_panics(input in proptest::collection::vec(any::<u8>(), 0..60)) {
        let _ = parse_algorithm_params(&input, &[]);
        let _ = parse_name::<Algorithm>(&input);
    }

    #[test]
    fn simple_pairs_round_trip(key in "[a-z]{1,8}", value in "[a-z0-9/._-]{1,12}") {
        let text = format!("{key}={value}");
        let (arg, rest) = next_arg(text.as_bytes());
        prop_assert_eq!(arg.param, key.as_bytes());
        prop_assert_eq!(arg.val, Some(value.as_bytes()));
        prop_assert!(rest.is_empty());
    }
}
