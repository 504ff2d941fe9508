// SPDX-License-Identifier: GPL-2.0
//! CPUs and scheduling: how many CPUs are online, which one runs this thread, the debug
//! kernel's check that a thread may sleep, and giving the CPU away in long loops
//! (`cond_resched()`). On x86_64 the CPU's number is read inline, as C's
//! `raw_smp_processor_id()` reads it (one `gs`-relative load of the per-CPU variable the kernel
//! exports: `cpu_number` on 7.x, `pcpu_hot.cpu_number` on 6.12; Kbuild's
//! `zram_rs_cpu_number_var` and `zram_rs_cpu_number_pcpu_hot`), since C's macro reaches Rust only
//! as an out-of-line call, with values spilled around it on every stream or context borrow;
//! elsewhere through the shim. [`check`] compares the two on every online CPU at load.

use super::ffi;
use kernel::prelude::*;

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
#[inline(always)]
pub(crate) fn this_cpu() -> u32 {
    #[cfg(any(zram_rs_cpu_number_var, zram_rs_cpu_number_pcpu_hot))]
    {
        this_cpu_inline()
    }
    #[cfg(not(any(zram_rs_cpu_number_var, zram_rs_cpu_number_pcpu_hot)))]
    {
        this_cpu_shim()
    }
}

/// `raw_smp_processor_id()` through the shim.
fn this_cpu_shim() -> u32 {
    // SAFETY: reads a per-CPU number; no preconditions.
    unsafe { ffi::zram_rs_this_cpu() }
}

/// `raw_smp_processor_id()` of x86_64: this CPU's copy of the per-CPU `int` the kernel keeps
/// the CPU's number in, read through `gs` (the per-CPU base) at the variable's address relative
/// to the instruction, as C's `this_cpu_read()` does.
#[cfg(any(zram_rs_cpu_number_var, zram_rs_cpu_number_pcpu_hot))]
#[inline(always)]
fn this_cpu_inline() -> u32 {
    // (Chosen here, not by attributes on the `asm!` operands, which Rust allows only from 1.88.)
    #[cfg(zram_rs_cpu_number_var)]
    use kernel::bindings::cpu_number as VAR;
    #[cfg(zram_rs_cpu_number_pcpu_hot)]
    use kernel::bindings::pcpu_hot as VAR;
    #[cfg(zram_rs_cpu_number_var)]
    const OFFSET: usize = 0;
    #[cfg(zram_rs_cpu_number_pcpu_hot)]
    const OFFSET: usize = {
        use kernel::bindings::{pcpu_hot, pcpu_hot__bindgen_ty_1__bindgen_ty_1 as Hot};
        core::mem::offset_of!(pcpu_hot, __bindgen_anon_1) + core::mem::offset_of!(Hot, cpu_number)
    };
    let cpu: u32;
    // SAFETY: one 4-byte load of this CPU's copy of an exported per-CPU variable (live for the
    // kernel's lifetime), `gs`-relative as the kernel's own reads of it; writes nothing.
    unsafe {
        core::arch::asm!(
            "mov {cpu:e}, dword ptr gs:[rip + {var} + {offset}]",
            cpu = out(reg) cpu,
            var = sym VAR,
            offset = const OFFSET,
            options(nostack, readonly, preserves_flags),
        );
    }
    cpu
}

/// Checks, once at load and on every online CPU, that [`this_cpu`] reads the number the
/// kernel has for that CPU (as its `raw_smp_processor_id()` returns it); refuses to load
/// (`EINVAL`, with a message) if not, rather than pick streams by a wrong number. Nothing to
/// check where [`this_cpu`] is the kernel's own function.
pub(crate) fn check() -> Result {
    #[cfg(any(zram_rs_cpu_number_var, zram_rs_cpu_number_pcpu_hot))]
    {
        use kernel::bindings;
        use kernel::ffi::c_void;

        /// What one CPU is asked to confirm, and its answer.
        struct Seen {
            cpu: u32,
            same: bool,
        }

        /// Runs on the CPU asked (in its interrupt, so on no other).
        ///
        /// # Safety
        ///
        /// `info` points to a live [`Seen`] that nothing else touches while this runs.
        unsafe extern "C" fn on_cpu(info: *mut c_void) {
            // SAFETY: `info` is the `Seen` that `check` passed, live and untouched by `check`
            // until this returns (the call waits for it).
            let seen = unsafe { &mut *info.cast::<Seen>() };
            seen.same = this_cpu_inline() == seen.cpu && this_cpu_shim() == seen.cpu;
        }

        /// `smp_call_function_single()`'s `wait`, set: a `bool` on 7.x, an `int` on 6.12.
        #[cfg(zram_rs_smp_wait_bool)]
        const WAIT: bool = true;
        #[cfg(not(zram_rs_smp_wait_bool))]
        const WAIT: kernel::ffi::c_int = 1;

        // SAFETY: a plain read of a variable set at boot (`__read_mostly`).
        let ids = unsafe { core::ptr::addr_of!(bindings::nr_cpu_ids).read() };
        let mut checked = 0u32;
        for cpu in 0..ids {
            let id = i32::try_from(cpu).map_err(|_| EINVAL)?;
            let mut seen = Seen { cpu, same: false };
            // SAFETY: `on_cpu` only reaches `seen` through `info`, which outlives the call: with
            // `wait` set it returns once `on_cpu` has run (or at once, for a CPU not online).
            let ret = unsafe {
                bindings::smp_call_function_single(
                    id,
                    Some(on_cpu),
                    core::ptr::addr_of_mut!(seen).cast::<c_void>(),
                    WAIT,
                )
            };
            if ret != 0 {
                // Not online.
                continue;
            }
            if !seen.same {
                pr_err!(
                    "CPU {}'s number differs from the kernel's (raw_smp_processor_id); not loading\n",
                    cpu
                );
                return Err(EINVAL);
            }
            checked += 1;
        }
        if checked == 0 {
            pr_err!("no CPU answered the check of CPU numbers; not loading\n");
            return Err(EINVAL);
        }
    }
    Ok(())
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
