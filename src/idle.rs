// SPDX-License-Identifier: GPL-2.0
//! What `idle` accepts, per kernel, with C zram's errors (`all`, or an age in seconds, which
//! 7.x takes as a `u32` and 7.3 ignores at or beyond the uptime), and the [`Cutoff`] it
//! becomes: which slots it marks, from their last access time. Pure logic, shared with the
//! host crate; the device applies the result.

use crate::parse::{c_str, kstrtoull, ParseError};
use crate::tokens::sysfs_streq;

/// What an `idle` write asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// `all`: mark every slot in the pool idle.
    All,
    /// Mark the slots not accessed for at least this many seconds idle, and unmark the others.
    OlderThan(u64),
}

/// An `idle` write on 6.12 (with access times): `all` or a `kstrtoull()` number of any base;
/// else `EINVAL`, before the initialisation check.
pub fn idle_6_12(input: &[u8]) -> Result<Idle, ParseError> {
    let s = c_str(input);
    if sysfs_streq(s, b"all") {
        return Ok(Idle::All);
    }
    kstrtoull(s, 0)
        .map(Idle::OlderThan)
        .map_err(|_| ParseError::Invalid)
}

/// An `idle` write on 7.3 (with access times): `all` or a `kstrtouint()` number of any base,
/// else `EINVAL`; `None` for an age at or beyond `uptime` seconds, which C 7.3 accepts without
/// doing anything (not even the initialisation check).
pub fn idle_7_3(input: &[u8], uptime: u64) -> Result<Option<Idle>, ParseError> {
    Ok(match idle_7_2(input)? {
        Idle::OlderThan(age) if age >= uptime => None,
        idle => Some(idle),
    })
}

/// An `idle` write on 7.2 (with access times): `all` or a `kstrtouint()` number of any base,
/// else `EINVAL`. Unlike 7.3's, an age at or beyond the uptime is an age like any other (C 7.2
/// checks the device for it; [`Cutoff::of_7_2`] makes it [`Cutoff::Unchanged`]).
pub fn idle_7_2(input: &[u8]) -> Result<Idle, ParseError> {
    let s = c_str(input);
    if sysfs_streq(s, b"all") {
        return Ok(Idle::All);
    }
    let age = kstrtoull(s, 0).map_err(|_| ParseError::Invalid)?;
    let age = u32::try_from(age).map_err(|_| ParseError::Invalid)?;
    Ok(Idle::OlderThan(u64::from(age)))
}

/// Nanoseconds in a second.
const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Which slots an `idle` write marks, from their last access time (whole seconds since boot,
/// as the slot keeps it): C's `cutoff`, in nanoseconds of boot time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cutoff {
    /// `all` (or C's cutoff of 0, which means the same): every slot holding an object.
    All,
    /// The slots last accessed before this boot time: marked idle; the others are unmarked.
    Before(i64),
    /// No slot: an age at or beyond the uptime on 7.2, after the device's check; every mark
    /// stays as it is, as on 7.3. (C 7.2's cutoff, `u32` seconds of uptime minus the age,
    /// wraps or is 0 there, and it marks every slot idle; zram_rs does not follow it.)
    Unchanged,
}

impl Cutoff {
    /// C 6.12's cutoff for `idle` at boot time `now_ns`: `now - age * NSEC_PER_SEC` in its
    /// `ktime_t` arithmetic, which wraps for ages beyond about 584 years (the product is a
    /// `u64`) and is then whatever the wrapped value says, as in C. A cutoff of 0 is `all`.
    pub fn of_6_12(idle: Idle, now_ns: u64) -> Self {
        match idle {
            Idle::All => Self::All,
            Idle::OlderThan(age) => {
                let cutoff = (now_ns as i64).wrapping_sub(age.wrapping_mul(NSEC_PER_SEC) as i64);
                if cutoff == 0 {
                    Self::All
                } else {
                    Self::Before(cutoff)
                }
            }
        }
    }

    /// C 7.3's cutoff for `idle` at `uptime` seconds: `uptime - age` seconds, for an age below
    /// the uptime (what [`idle_7_3`] returns).
    pub fn of_7_3(idle: Idle, uptime: u64) -> Self {
        match idle {
            Idle::All => Self::All,
            Idle::OlderThan(age) => match uptime.checked_sub(age) {
                // Below 2^63 nanoseconds for any uptime C's `u32` ages leave.
                Some(seconds) if seconds > 0 => {
                    Self::Before(seconds.saturating_mul(NSEC_PER_SEC).min(i64::MAX as u64) as i64)
                }
                _ => Self::All,
            },
        }
    }

    /// The cutoff on 7.2 for `idle` at `uptime` seconds: 7.3's for an age below the uptime (C
    /// 7.2's too), else [`Cutoff::Unchanged`].
    pub fn of_7_2(idle: Idle, uptime: u64) -> Self {
        match idle {
            Idle::OlderThan(age) if age >= uptime => Self::Unchanged,
            idle => Self::of_7_3(idle, uptime),
        }
    }

    /// Whether a slot holding an object, last accessed at `access` seconds of boot time, is
    /// idle under this cutoff (C's `ktime_after(cutoff, ac_time)`, or `cutoff > ac_time` in
    /// seconds on 7.3).
    pub fn is_idle(self, access: u32) -> bool {
        match self {
            Self::All => true,
            Self::Before(cutoff) => cutoff > i64::from(access) * NSEC_PER_SEC as i64,
            Self::Unchanged => false,
        }
    }
}
