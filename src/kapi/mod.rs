// SPDX-License-Identifier: GPL-2.0
//! The kernel-facing layer. Every call into C, every C structure and every `unsafe` block that
//! touches kernel memory lives in this folder, behind safe types; the driver (`zram.rs`,
//! `table.rs`, `attrs.rs`, the compression layer `comp/` and the pure modules) uses only these.
//! The C declarations (`ffi`) are private to this folder, wrapped by one module per C library
//! or kernel facility. The differences between the kernels' interfaces are chosen here, by
//! `cfg`s Kbuild derives from the tree being built against (only `module!`'s keys sit in the
//! crate root); C zram's user ABI per kernel (`zram_abi_7_3`) is chosen where it is written.

pub(crate) mod bio;
pub(crate) mod bounce;
pub(crate) mod class;
pub(crate) mod cpu;
pub(crate) mod disk;
pub(crate) mod disk_attr;
mod ffi;
pub(crate) mod lockdep;
pub(crate) mod lz4;
pub(crate) mod lzo;
pub(crate) mod mem;
pub(crate) mod sw842;
pub(crate) mod sysfs;
pub(crate) mod trylock;
pub(crate) mod zlib;
pub(crate) mod zspool;
pub(crate) mod zstd;

/// What zram_rs keeps of C zram's private layout, per kernel.
pub(crate) mod c_zram {
    /// `ZRAM_HUGE - ZRAM_FLAG_SHIFT`: 7.3 put a lock bit, and moved its writeback flags, in
    /// front of it (checked against `zram_drv.h` in `table.rs` where the tree has it).
    #[cfg(not(zram_abi_7_3))]
    pub(crate) const HUGE_FLAG: u32 = 3;
    /// See above.
    #[cfg(zram_abi_7_3)]
    pub(crate) const HUGE_FLAG: u32 = 4;
}

/// The kernel's values of C zram's own constants (`zram_drv.h`), where the tree has the header
/// (`HAVE_ZRAM_DRV_H` is 1), for build-time checks of the slot layout.
pub(crate) use ffi::c;

/// The `num_devices` module parameter (declared in `shim.c`).
pub(crate) fn num_devices_param() -> u32 {
    // SAFETY: reads a module parameter, which the kernel set before the module's init ran.
    unsafe { ffi::zram_rs_num_devices_param() }
}

/// `EOPNOTSUPP`, which `kernel::error::code` lacks on 6.12.
pub(crate) fn eopnotsupp() -> kernel::error::Error {
    kernel::error::Error::from_errno(-(kernel::bindings::EOPNOTSUPP as i32))
}
