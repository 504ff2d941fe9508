//! `idle` input on each kernel and the cutoffs it becomes, against C zram's answers read from
//! its source.

use proptest::prelude::*;
use zram_rs_logic::idle::{idle_6_12, idle_7_2, idle_7_3, Cutoff, Idle};
use zram_rs_logic::parse::ParseError;

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
    assert_eq!(idle_6_12(b"18446744073709551616"), Err(ParseError::Invalid));
    assert_eq!(idle_6_12(b"-1"), Err(ParseError::Invalid));
    assert_eq!(idle_6_12(b"ALL"), Err(ParseError::Invalid));
    assert_eq!(idle_6_12(b""), Err(ParseError::Invalid));

    assert_eq!(idle_7_3(b"all", 1000), Ok(Some(Idle::All)));
    assert_eq!(idle_7_3(b"60", 1000), Ok(Some(Idle::OlderThan(60))));
    assert_eq!(idle_7_3(b"999", 1000), Ok(Some(Idle::OlderThan(999))));
    // At or beyond the uptime: accepted, nothing to do.
    assert_eq!(idle_7_3(b"1000", 1000), Ok(None));
    assert_eq!(idle_7_3(b"4294967295", 1000), Ok(None));
    assert_eq!(idle_7_3(b"4294967296", 1000), Err(ParseError::Invalid));
    assert_eq!(idle_7_3(b"x", 1000), Err(ParseError::Invalid));

    // 7.2: the same input, and an age at or beyond the uptime is one like any other.
    assert_eq!(idle_7_2(b"all\n"), Ok(Idle::All));
    assert_eq!(idle_7_2(b"0x3c"), Ok(Idle::OlderThan(60)));
    assert_eq!(idle_7_2(b"4294967295"), Ok(Idle::OlderThan(4294967295)));
    assert_eq!(idle_7_2(b"4294967296"), Err(ParseError::Invalid));
    assert_eq!(idle_7_2(b"-1"), Err(ParseError::Invalid));
}

#[test]
fn idle_on_7_2_marks_nothing_beyond_the_uptime() {
    // Below the uptime: 7.3's cutoff.
    assert_eq!(
        Cutoff::of_7_2(Idle::OlderThan(10), 100),
        Cutoff::of_7_3(Idle::OlderThan(10), 100)
    );
    assert_eq!(Cutoff::of_7_2(Idle::All, 100), Cutoff::All);
    // At or beyond it (where C 7.2's `u32` cutoff is 0 or wraps, marking every slot): no
    // slot is idle, and the device leaves every mark as it is.
    for age in [100, 101, u64::from(u32::MAX)] {
        let cutoff = Cutoff::of_7_2(Idle::OlderThan(age), 100);
        assert_eq!(cutoff, Cutoff::Unchanged);
        assert!(!cutoff.is_idle(0));
        assert!(!cutoff.is_idle(99));
    }
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


    /// Any input gets an answer.
    #[test]
    fn any_input_is_answered(input in prop::collection::vec(any::<u8>(), 0..40), uptime: u64) {
        let _ = idle_6_12(&input);
        let _ = idle_7_3(&input, uptime);
        let _ = idle_7_2(&input);
    }
}
