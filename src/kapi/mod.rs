// SPDX-License-Identifier: GPL-2.0
//! The kernel-facing layer. Every call into C, every C structure and every `unsafe` block that
//! touches kernel memory lives in this folder, behind safe types; the driver (`zram.rs`,
//! `table.rs`, `attrs.rs`, the compression layer `comp/` and the pure modules) uses only these.
//! The C declarations (`ffi`) are private to this folder, wrapped by one module per C library
//! or kernel facility. The differences between the kernels' interfaces are chosen here, by
//! `cfg`s Kbuild derives from the tree being built against (only `module!`'s keys sit in the
//! crate root). C zram's user ABI per kernel is not chosen here but in `abi/`.

pub(crate) mod bdev;
pub(crate) mod bio;
pub(crate) mod bit_wait;
pub(crate) mod bounce;
pub(crate) mod class;
pub(crate) mod cpu;
pub(crate) mod debugfs;
pub(crate) mod disk;
pub(crate) mod disk_attr;
mod disk_state;
mod ffi;
pub(crate) mod file;
pub(crate) mod lockdep;
#[cfg(any(zram_rs_backend_lz4, zram_rs_backend_lz4hc))]
pub(crate) mod lz4;
#[cfg(zram_rs_backend_lzo)]
pub(crate) mod lzo;
pub(crate) mod mem;
pub(crate) mod page_map;
pub(crate) mod page_writes;
pub(crate) mod rwsem;
#[cfg(zram_rs_backend_842)]
pub(crate) mod sw842;
pub(crate) mod sysfs;
pub(crate) mod time;
pub(crate) mod trylock;
#[cfg(zram_rs_backend_deflate)]
pub(crate) mod zlib;
pub(crate) mod zspool;
// zsmalloc's object access of the tree built against (Kbuild's probe), for `zspool.rs`.
#[cfg(not(zram_rs_zs_obj_rw))]
mod zs_map;
#[cfg(not(zram_rs_zs_obj_rw))]
use zs_map as zs_access;
#[cfg(zram_rs_zs_obj_rw)]
mod zs_obj_rw;
#[cfg(zram_rs_zs_obj_rw)]
use zs_obj_rw as zs_access;
#[cfg(zram_rs_backend_zstd)]
pub(crate) mod zstd;

/// What zram_rs keeps of C zram's private layout, per kernel.
pub(crate) mod c_zram {
    /// Bit numbers of C zram's page flags in this kernel's `zram_drv.h`.
    pub(crate) struct Flags {
        /// `ZRAM_FLAG_SHIFT`.
        pub(crate) flag_shift: i64,
        /// `ZRAM_SAME`.
        pub(crate) same: i64,
        /// `ZRAM_HUGE`.
        pub(crate) huge: i64,
        /// `ZRAM_IDLE`.
        pub(crate) idle: i64,
        /// `ZRAM_WB`.
        pub(crate) wb: i64,
        /// `ZRAM_UNDER_WB` (6.12) or `ZRAM_PP_SLOT` (7.x).
        pub(crate) pp_mark: i64,
        /// `ZRAM_INCOMPRESSIBLE`.
        pub(crate) incompressible: i64,
        /// `ZRAM_COMP_PRIORITY_BIT1`.
        pub(crate) priority_bit1: i64,
        /// `__NR_ZRAM_PAGEFLAGS`.
        pub(crate) count: i64,
    }

    use super::ffi::c;
    /// C zram's flags where the tree has its header, for build-time checks of the slot layout
    /// (`table.rs`); `None` where it has not.
    pub(crate) const FLAGS: Option<Flags> = if c::HAVE_ZRAM_DRV_H == 0 {
        None
    } else {
        Some(Flags {
            flag_shift: c::ZRAM_FLAG_SHIFT,
            same: c::ZRAM_SAME,
            huge: c::ZRAM_HUGE,
            idle: c::ZRAM_IDLE,
            wb: c::ZRAM_WB,
            pp_mark: c::ZRAM_PP_MARK,
            incompressible: c::ZRAM_INCOMPRESSIBLE,
            priority_bit1: c::ZRAM_COMP_PRIORITY_BIT1,
            count: c::NR_ZRAM_PAGEFLAGS,
        })
    };
}

/// The `num_devices` module parameter (declared in `shim.c`).
pub(crate) fn num_devices_param() -> u32 {
    // SAFETY: reads a module parameter, which the kernel set before the module's init ran.
    unsafe { ffi::zram_rs_num_devices_param() }
}

/// `EOPNOTSUPP`, which `kernel::error::code` lacks on 6.12.
pub(crate) fn eopnotsupp() -> kernel::error::Error {
    kernel::error::Error::from_errno(-(kernel::bindings::EOPNOTSUPP as i32))
}
