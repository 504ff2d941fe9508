// SPDX-License-Identifier: GPL-2.0
//! CPUs and scheduling: how many CPUs are online, which one runs this thread, the debug
//! kernel's check that a thread may sleep, and giving the CPU away in long loops
//! (`cond_resched()`).

use super::ffi;

/// `might_sleep()`: where the kernel checks it (`CONFIG_DEBUG_ATOMIC_SLEEP`), complains if the
/// caller may not sleep; elsewhere nothing (no rescheduling point is offered).
#[inline(always)]
pub(crate) fn might_sleep() {
    #[cfg(CONFIG_DEBUG_ATOMIC_SLEEP)]
    // SAFETY: `might_sleep()` only checks the context; no preconditions.
    unsafe {
        ffi::zram_rs_might_sleep()
    };
}

/// The CPU this thread runs on now (`raw_smp_processor_id()`): a hint, it may change at once.
pub(crate) fn this_cpu() -> u32 {
    // SAFETY: reads a per-CPU number; no preconditions.
    unsafe { ffi::zram_rs_this_cpu() }
}

/// `num_online_cpus()`.
pub(crate) fn num_online_cpus() -> u32 {
    // SAFETY: reads the online CPU mask's weight; no preconditions.
    unsafe { ffi::zram_rs_num_online_cpus() }
}

/// `cond_resched()`: lets another task run if one should, from a long loop of a thread that
/// may sleep (and holds no spinning lock).
pub(crate) fn cond_resched() {
    // SAFETY: no precondition beyond a context that may sleep, which callers are.
    unsafe { ffi::zram_rs_cond_resched() };
}
