// SPDX-License-Identifier: GPL-2.0
//! The boot-time clock, as C zram reads it for access times and `idle` ages: the coarse boot
//! time (`ktime_get_coarse_boottime()`, what `ktime_get_boottime_seconds()` divides), which
//! reads the timekeeper's last tick without touching the clock source.

use kernel::bindings;

const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Nanoseconds since boot, suspend included, as of the last timer tick.
pub(crate) fn boottime_ns() -> u64 {
    // SAFETY: no preconditions; reads the timekeeper under its own sequence count.
    let ns = unsafe { bindings::ktime_get_coarse_with_offset(bindings::tk_offsets_TK_OFFS_BOOT) };
    // Time since boot is never negative: a plain conversion (no clamp on every bio), as C's
    // `(u32)ktime_get_boottime_seconds()` converts without one.
    ns as u64
}

/// Whole seconds since boot (`ktime_get_boottime_seconds()`).
#[inline(always)]
pub(crate) fn boottime_seconds() -> u64 {
    boottime_ns() / NSEC_PER_SEC
}
