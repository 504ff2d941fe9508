//! `writeback` input on each kernel, against C zram's answers read from its source.

use proptest::prelude::*;
use zram_rs_logic::parse::ParseError;
use zram_rs_logic::writeback_args::{writeback_6_12, writeback_7_3, Filter, Request6_12, Scan};

const IDLE: Filter = Filter {
    idle: true,
    huge: false,
    incompressible: false,
};
const HUGE: Filter = Filter {
    idle: false,
    huge: true,
    incompressible: false,
};
const HUGE_IDLE: Filter = Filter {
    idle: true,
    huge: true,
    incompressible: false,
};
const INCOMPRESSIBLE: Filter = Filter {
    idle: false,
    huge: false,
    incompressible: true,
};

#[test]
fn writeback_6_12_words_and_page_index() {
    use Request6_12::*;
    let cases: &[(&[u8], Result<Request6_12, ParseError>)] = &[
        (b"idle", Ok(All(IDLE))),
        (b"idle\n", Ok(All(IDLE))),
        (b"huge", Ok(All(HUGE))),
        (b"huge_idle\n", Ok(All(HUGE_IDLE))),
        (b"incompressible", Ok(All(INCOMPRESSIBLE))),
        (b"idle\n\n", Err(ParseError::Invalid)),
        (b" idle", Err(ParseError::Invalid)),
        (b"IDLE", Err(ParseError::Invalid)),
        (b"type=idle", Err(ParseError::Invalid)),
        (b"", Err(ParseError::Invalid)),
        (b"\n", Err(ParseError::Invalid)),
        (b"page_index=0", Ok(Page(0))),
        (b"page_index=17\n", Ok(Page(17))),
        (b"page_index=+5", Ok(Page(5))),
        (b"page_index=-1", Ok(Page(u64::MAX))),
        (b"page_index=0x10", Err(ParseError::Invalid)),
        (b"page_index=", Err(ParseError::Invalid)),
        (b"page_index=9223372036854775808", Err(ParseError::Invalid)),
        (b"page_index=1 ", Err(ParseError::Invalid)),
        (b"page_indexes=1-2", Err(ParseError::Invalid)),
        (b"idle\0garbage", Ok(All(IDLE))),
    ];
    for (input, expected) in cases {
        assert_eq!(
            writeback_6_12(input),
            *expected,
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

fn scans_7_3(input: &[u8], pages: u64) -> Result<Vec<Scan>, ParseError> {
    let mut scans = Vec::new();
    writeback_7_3(input, pages, |s| scans.push(s)).map(|()| scans)
}

fn scan(filter: Filter, start: u64, end: u64) -> Scan {
    Scan { filter, start, end }
}

#[test]
fn writeback_7_3_parameters() {
    let any = Filter::ANY;
    let cases: &[(&[u8], Result<Vec<Scan>, ParseError>)] = &[
        (b"idle", Ok(vec![scan(IDLE, 0, 100)])),
        (b"huge_idle\n", Ok(vec![scan(HUGE_IDLE, 0, 100)])),
        (b"  huge  ", Ok(vec![scan(HUGE, 0, 100)])),
        (b"idle=", Ok(vec![scan(IDLE, 0, 100)])),
        (
            b"type=incompressible",
            Ok(vec![scan(INCOMPRESSIBLE, 0, 100)]),
        ),
        (b"type=\"idle\"", Ok(vec![scan(IDLE, 0, 100)])),
        (b"type=bogus", Err(ParseError::Invalid)),
        (b"type=", Err(ParseError::Invalid)),
        (b"bogus", Err(ParseError::Invalid)),
        // Parsing ends at the mode: what follows is not read.
        (b"type=idle page_index=5", Ok(vec![scan(IDLE, 0, 100)])),
        (b"idle page_index=oops", Ok(vec![scan(IDLE, 0, 100)])),
        (
            b"page_index=5 type=huge",
            Ok(vec![scan(any, 5, 6), scan(HUGE, 5, 6)]),
        ),
        (
            b"page_index=5 page_index=7",
            Ok(vec![scan(any, 5, 6), scan(any, 7, 8)]),
        ),
        (
            b"page_indexes=3-9 idle",
            Ok(vec![scan(any, 3, 10), scan(IDLE, 3, 10)]),
        ),
        (b"page_indexes=4-4", Ok(vec![scan(any, 4, 5)])),
        (b"page_indexes=0-99", Ok(vec![scan(any, 0, 100)])),
        (b"page_index=99", Ok(vec![scan(any, 99, 100)])),
        (b"page_index=100", Err(ParseError::Range)),
        (b"page_index=18446744073709551616", Err(ParseError::Range)),
        (b"page_index=-1", Err(ParseError::Invalid)),
        (b"page_index=0x1", Err(ParseError::Invalid)),
        (b"page_index=", Err(ParseError::Invalid)),
        (b"page_indexes=5", Err(ParseError::Invalid)),
        (b"page_indexes=9-3", Err(ParseError::Range)),
        (b"page_indexes=3-100", Err(ParseError::Range)),
        (b"page_indexes=100-101", Err(ParseError::Range)),
        (b"page_indexes=x-3", Err(ParseError::Invalid)),
        (b"page_indexes=3-x", Err(ParseError::Invalid)),
        (b"page_indexes=3--4", Err(ParseError::Invalid)),
        // An error after a scan: the scan happened, the caller undoes it.
        (b"page_index=1 page_index=200", Err(ParseError::Range)),
        // Unknown keys are ignored; nothing at all is fine.
        (b"colour=blue", Ok(vec![])),
        (b"colour=blue page_index=2", Ok(vec![scan(any, 2, 3)])),
        (b"", Ok(vec![])),
        (b"\n", Ok(vec![])),
    ];
    for (input, expected) in cases {
        assert_eq!(
            scans_7_3(input, 100),
            *expected,
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

proptest! {
    /// Any input gets an answer, and `page_index=N` of any signed 64-bit N is that index.
    #[test]
    fn any_input_is_answered(input in prop::collection::vec(any::<u8>(), 0..40), n: i64, pages in 0u64..1000) {
        let _ = writeback_6_12(&input);
        let _ = scans_7_3(&input, pages);
        prop_assert_eq!(
            writeback_6_12(format!("page_index={n}\n").as_bytes()),
            Ok(Request6_12::Page(n as u64))
        );
    }

    /// Every scan of a 7.3 write lies inside the disk.
    #[test]
    fn scans_stay_inside_the_disk(a in 0u64..300, b in 0u64..300, pages in 0u64..200) {
        for input in [format!("page_index={a}"), format!("page_indexes={a}-{b}"), format!("page_indexes={a}-{b} idle")] {
            if let Ok(scans) = scans_7_3(input.as_bytes(), pages) {
                for s in scans {
                    prop_assert!(s.start < s.end && s.end <= pages, "{:?} of {}", s, pages);
                }
            }
        }
    }
}
