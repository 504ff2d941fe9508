// SPDX-License-Identifier: GPL-2.0
//! CPUs and preemption: how many CPUs are online, which one runs this thread, the preemption
//! count the slot locks hold (as the kernel's bit spinlocks do), and giving the CPU away in
//! long loops (`cond_resched()`).

use super::ffi;

/// `preempt_disable()`. Without `CONFIG_PREEMPT_COUNT` the C macro is only a compiler barrier,
/// which the atomic operation that follows it here already is, so no call is made.
///
/// # Safety
///
/// Must be paired with [`preempt_enable`] on the same thread.
#[inline(always)]
pub(crate) unsafe fn preempt_disable() {
    #[cfg(CONFIG_PREEMPT_COUNT)]
    // SAFETY: `preempt_disable()` has no preconditions; the caller pairs it.
    unsafe {
        ffi::zram_rs_preempt_disable()
    };
}

/// `preempt_enable()`; see [`preempt_disable`].
///
/// # Safety
///
/// Undoes one [`preempt_disable`] of the same thread.
#[inline(always)]
pub(crate) unsafe fn preempt_enable() {
    #[cfg(CONFIG_PREEMPT_COUNT)]
    // SAFETY: pairs with an earlier `preempt_disable()` of this thread (caller's promise).
    unsafe {
        ffi::zram_rs_preempt_enable()
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

/// `msleep()`: sleeps for at least `ms` milliseconds (in a context that may sleep).
pub(crate) fn sleep_ms(ms: u32) {
    // SAFETY: no precondition beyond a context that may sleep, which callers are.
    unsafe { ffi::msleep(ms) };
}
