//! `writeback` and `idle` input on each kernel, against C zram's answers read from its source.

use proptest::prelude::*;
use zram_rs_logic::writeback_args::{
    idle_6_12, idle_7_3, writeback_6_12, writeback_7_3, Cutoff, Filter, Idle, Refused, Request6_12,
    Scan,
};

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
    let cases: &[(&[u8], Result<Request6_12, Refused>)] = &[
        (b"idle", Ok(All(IDLE))),
        (b"idle\n", Ok(All(IDLE))),
        (b"huge", Ok(All(HUGE))),
        (b"huge_idle\n", Ok(All(HUGE_IDLE))),
        (b"incompressible", Ok(All(INCOMPRESSIBLE))),
        (b"idle\n\n", Err(Refused::Invalid)),
        (b" idle", Err(Refused::Invalid)),
        (b"IDLE", Err(Refused::Invalid)),
        (b"type=idle", Err(Refused::Invalid)),
        (b"", Err(Refused::Invalid)),
        (b"\n", Err(Refused::Invalid)),
        (b"page_index=0", Ok(Page(0))),
        (b"page_index=17\n", Ok(Page(17))),
        (b"page_index=+5", Ok(Page(5))),
        (b"page_index=-1", Ok(Page(u64::MAX))),
        (b"page_index=0x10", Err(Refused::Invalid)),
        (b"page_index=", Err(Refused::Invalid)),
        (b"page_index=9223372036854775808", Err(Refused::Invalid)),
        (b"page_index=1 ", Err(Refused::Invalid)),
        (b"page_indexes=1-2", Err(Refused::Invalid)),
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

fn scans_7_3(input: &[u8], pages: u64) -> Result<Vec<Scan>, Refused> {
    let mut scans = Vec::new();
    writeback_7_3(input, pages, |s| scans.push(s)).map(|()| scans)
}

fn scan(filter: Filter, start: u64, end: u64) -> Scan {
    Scan { filter, start, end }
}

#[test]
fn writeback_7_3_parameters() {
    let any = Filter::ANY;
    let cases: &[(&[u8], Result<Vec<Scan>, Refused>)] = &[
        (b"idle", Ok(vec![scan(IDLE, 0, 100)])),
        (b"huge_idle\n", Ok(vec![scan(HUGE_IDLE, 0, 100)])),
        (b"  huge  ", Ok(vec![scan(HUGE, 0, 100)])),
        (b"idle=", Ok(vec![scan(IDLE, 0, 100)])),
        (
            b"type=incompressible",
            Ok(vec![scan(INCOMPRESSIBLE, 0, 100)]),
        ),
        (b"type=\"idle\"", Ok(vec![scan(IDLE, 0, 100)])),
        (b"type=bogus", Err(Refused::Invalid)),
        (b"type=", Err(Refused::Invalid)),
        (b"bogus", Err(Refused::Invalid)),
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
        (b"page_index=100", Err(Refused::Range)),
        (b"page_index=18446744073709551616", Err(Refused::Range)),
        (b"page_index=-1", Err(Refused::Invalid)),
        (b"page_index=0x1", Err(Refused::Invalid)),
        (b"page_index=", Err(Refused::Invalid)),
        (b"page_indexes=5", Err(Refused::Invalid)),
        (b"page_indexes=9-3", Err(Refused::Range)),
        (b"page_indexes=3-100", Err(Refused::Range)),
        (b"page_indexes=100-101", Err(Refused::Range)),
        (b"page_indexes=x-3", Err(Refused::Invalid)),
        (b"page_indexes=3-x", Err(Refused::Invalid)),
        (b"page_indexes=3--4", Err(Refused::Invalid)),
        // An error after a scan: the scan happened, the caller undoes it.
        (b"page_index=1 page_index=200", Err(Refused::Range)),
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

#[test]
fn idle_on_each_kernel() {
    assert_eq!(idle_6_12(b"all"), Ok(Idle::All));
    assert_eq!(idle_6_12(b"all\n"), Ok(Idle::All));
    assert_eq!(idle_6_12(b"60\n"), Ok(Idle::OlderThan(60)));
    assert_eq!(idle_6_12(b"0x3c"), Ok(Idle::OlderThan(60)));
    assert_eq!(idle_6_12(b"074"), Ok(Idle::OlderThan(60)));
    assert_eq!(
        idle_6_12(b"18446744073709551615"),
        Ok(Idle::OlderThan(u64::MAX))
    );
    assert_eq!(idle_6_12(b"18446744073709551616"), Err(Refused::Invalid));
    assert_eq!(idle_6_12(b"-1"), Err(Refused::Invalid));
    assert_eq!(idle_6_12(b"ALL"), Err(Refused::Invalid));
    assert_eq!(idle_6_12(b""), Err(Refused::Invalid));

    assert_eq!(idle_7_3(b"all", 1000), Ok(Some(Idle::All)));
    assert_eq!(idle_7_3(b"60", 1000), Ok(Some(Idle::OlderThan(60))));
    assert_eq!(idle_7_3(b"999", 1000), Ok(Some(Idle::OlderThan(999))));
    // At or beyond the uptime: accepted, nothing to do.
    assert_eq!(idle_7_3(b"1000", 1000), Ok(None));
    assert_eq!(idle_7_3(b"4294967295", 1000), Ok(None));
    assert_eq!(idle_7_3(b"4294967296", 1000), Err(Refused::Invalid));
    assert_eq!(idle_7_3(b"x", 1000), Err(Refused::Invalid));
}

const SEC: u64 = 1_000_000_000;

#[test]
fn idle_cutoffs_on_each_kernel() {
    // 6.12: `now - age` in nanoseconds; a slot is idle when accessed before the cutoff.
    let now = 100 * SEC + SEC / 2;
    assert_eq!(Cutoff::of_6_12(Idle::All, now), Cutoff::All);
    let ten = Cutoff::of_6_12(Idle::OlderThan(10), now);
    assert_eq!(ten, Cutoff::Before((90 * SEC + SEC / 2) as i64));
    assert!(ten.is_idle(90));
    assert!(!ten.is_idle(91));
    assert!(!ten.is_idle(u32::MAX));
    // Age 0: every slot accessed before now, i.e. all of them but none in the future.
    assert!(Cutoff::of_6_12(Idle::OlderThan(0), now).is_idle(100));
    // An age beyond the uptime gives a negative cutoff: nothing is idle (C unmarks them all).
    let old = Cutoff::of_6_12(Idle::OlderThan(1000), now);
    assert!(!old.is_idle(0));
    // C's u64 product wraps: 2^64 - 1 seconds is -10^9 ns, a cutoff one second from now.
    let wrapped = Cutoff::of_6_12(Idle::OlderThan(u64::MAX), now);
    assert_eq!(wrapped, Cutoff::Before((now + SEC) as i64));
    assert!(wrapped.is_idle(100));
    // A cutoff of exactly 0 is C's `all`.
    assert_eq!(Cutoff::of_6_12(Idle::OlderThan(5), 5 * SEC), Cutoff::All);

    // 7.3: whole seconds, `uptime - age`, for ages below the uptime.
    assert_eq!(Cutoff::of_7_3(Idle::All, 100), Cutoff::All);
    let ten = Cutoff::of_7_3(Idle::OlderThan(10), 100);
    assert!(ten.is_idle(89));
    assert!(!ten.is_idle(90));
    assert!(Cutoff::of_7_3(Idle::OlderThan(0), 100).is_idle(99));
    assert!(!Cutoff::of_7_3(Idle::OlderThan(0), 100).is_idle(100));
}

proptest! {
    /// 7.3's rule in seconds: idle exactly when `uptime - age > access`.
    #[test]
    fn idle_7_3_is_c_in_seconds(uptime in 1u64..1 << 32, age in 0u64..1 << 32, access: u32) {
        if let Ok(Some(idle)) = idle_7_3(age.to_string().as_bytes(), uptime) {
            let cutoff = Cutoff::of_7_3(idle, uptime);
            prop_assert_eq!(cutoff.is_idle(access), uptime - age > u64::from(access));
        } else {
            prop_assert!(age >= uptime || age > u64::from(u32::MAX));
        }
    }

    /// 6.12's rule: idle exactly when the wrapped cutoff is non-zero and above the access
    /// time in nanoseconds, or zero (`all`).
    #[test]
    fn idle_6_12_is_c_in_nanoseconds(now: u64, age: u64, access: u32) {
        let now = now >> 1;
        let cutoff = (now as i64).wrapping_sub(age.wrapping_mul(SEC) as i64);
        let expected = cutoff == 0 || cutoff > i64::from(access) * SEC as i64;
        prop_assert_eq!(Cutoff::of_6_12(Idle::OlderThan(age), now).is_idle(access), expected);
    }

    /// Any input gets an answer, and `page_index=N` of any signed 64-bit N is that index.
    #[test]
    fn any_input_is_answered(input in prop::collection::vec(any::<u8>(), 0..40), n: i64, pages in 0u64..1000) {
        let _ = writeback_6_12(&input);
        let _ = scans_7_3(&input, pages);
        let _ = idle_6_12(&input);
        let _ = idle_7_3(&input, pages);
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
