// SPDX-License-Identifier: GPL-2.0
//! The sysfs attributes of a disk, with safe show/store functions: [`DeviceAttribute`] embeds
//! the C `device_attribute` next to the Rust functions, and one generic trampoline per kind
//! finds them again and hands them the disk's driver data.

use super::disk::{DiskOps, DiskRef};
use super::sysfs::{c_name, AttrPtr, SysfsBuf};
use core::cell::UnsafeCell;
use core::ffi::CStr;
use kernel::bindings;
use kernel::ffi::c_char;
use kernel::prelude::*;

const PAGE_SIZE: usize = bindings::PAGE_SIZE;

/// `device_attribute.show` and `.store` as C sees them.
type ShowCallback = Option<
    unsafe extern "C" fn(
        *mut bindings::device,
        *mut bindings::device_attribute,
        *mut c_char,
    ) -> isize,
>;
type StoreCallback = Option<
    unsafe extern "C" fn(
        *mut bindings::device,
        *mut bindings::device_attribute,
        *const c_char,
        usize,
    ) -> isize,
>;

/// Formats a value into a sysfs page.
pub(crate) type ShowFn<T> = fn(&T, DiskRef<'_, T>, &mut SysfsBuf<'_>) -> Result;
/// Takes the bytes user space wrote (without a terminating NUL).
pub(crate) type StoreFn<T> = fn(&T, DiskRef<'_, T>, &[u8]) -> Result;

/// A disk attribute: the C structure sysfs sees, followed by the Rust functions behind it.
///
/// # Invariants
///
/// `raw.show` / `raw.store` are the trampolines of this type exactly when `show` / `store` are
/// set; the structure is only registered through an `AttributeList<T, _>`, which only disks of
/// driver `T` take.
#[repr(C)]
pub(crate) struct DeviceAttribute<T: DiskOps> {
    raw: UnsafeCell<bindings::device_attribute>,
    show: Option<ShowFn<T>>,
    store: Option<StoreFn<T>>,
}

// SAFETY: after construction nothing writes to the structure; sysfs only reads it.
unsafe impl<T: DiskOps> Sync for DeviceAttribute<T> {}

impl<T: DiskOps> DeviceAttribute<T> {
    /// An attribute called `name` with permission bits `mode`.
    pub(crate) const fn new(
        name: &'static CStr,
        mode: u16,
        show: Option<ShowFn<T>>,
        store: Option<StoreFn<T>>,
    ) -> Self {
        // SAFETY: all-zero is a valid `attribute` (the lockdep fields of static attributes stay
        // zero in C too).
        let mut attr: bindings::attribute = unsafe { core::mem::zeroed() };
        attr.name = c_name(name);
        attr.mode = mode;
        let show_raw: ShowCallback = if show.is_some() {
            Some(show_callback::<T>)
        } else {
            None
        };
        let store_raw: StoreCallback = if store.is_some() {
            Some(store_callback::<T>)
        } else {
            None
        };
        // SAFETY: all-zero is a valid `device_attribute` (no callbacks).
        let mut raw: bindings::device_attribute = unsafe { core::mem::zeroed() };
        raw.attr = attr;
        // 7.x keeps each callback in an anonymous union with its `const` form.
        #[cfg(not(zram_rs_sysfs_alt))]
        {
            raw.show = show_raw;
            raw.store = store_raw;
        }
        #[cfg(zram_rs_sysfs_alt)]
        {
            raw.__bindgen_anon_1.show = show_raw;
            raw.__bindgen_anon_2.store = store_raw;
        }
        // INVARIANT: trampolines are installed exactly for the functions that are present.
        Self {
            raw: UnsafeCell::new(raw),
            show,
            store,
        }
    }
}

impl<T: DiskOps> AttrPtr<T> {
    /// The entry for the static attribute `attr`.
    pub(crate) const fn of(attr: &'static DeviceAttribute<T>) -> Self {
        // `DeviceAttribute` is `repr(C)` with the `device_attribute` (whose first field is the
        // `attribute`) first, so the pointers coincide.
        Self::new(
            core::ptr::from_ref(attr)
                .cast_mut()
                .cast::<bindings::attribute>(),
        )
    }
}

/// The Rust attribute behind a C `device_attribute` pointer.
///
/// # Safety
///
/// `attr` points into a static `DeviceAttribute<T>`.
unsafe fn rust_attribute<'a, T: DiskOps>(
    attr: *mut bindings::device_attribute,
) -> &'a DeviceAttribute<T> {
    // SAFETY: the `device_attribute` is the first field of the `repr(C)` `DeviceAttribute<T>`
    // (`UnsafeCell` is `repr(transparent)`), so the pointers coincide.
    unsafe { &*attr.cast::<DeviceAttribute<T>>() }
}

/// `device_attribute.show` of every [`DeviceAttribute`].
///
/// # Safety
///
/// Called by sysfs for an attribute registered through an `AttributeList<T, _>`, i.e. on a
/// disk of driver `T` (`GenDisk::<T>::add` takes only `AttributeGroups<T>`), with a
/// `PAGE_SIZE` buffer.
unsafe extern "C" fn show_callback<T: DiskOps>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: sysfs calls this only for attributes registered through an `AttributeList<T, _>`,
    // i.e. a static `DeviceAttribute<T>` of a disk of driver `T`, with a `PAGE_SIZE` buffer.
    let (attribute, disk, data, page) = unsafe {
        let (disk, data) = DiskRef::<T>::from_sysfs_device(dev);
        (
            rust_attribute::<T>(attr),
            disk,
            data,
            core::slice::from_raw_parts_mut(buf.cast::<u8>(), PAGE_SIZE),
        )
    };
    let Some(show) = attribute.show else {
        return EIO.to_errno() as isize;
    };
    let mut out = SysfsBuf::new(page);
    match show(data, disk, &mut out) {
        Ok(()) => out.len() as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// `device_attribute.store` of every [`DeviceAttribute`].
///
/// # Safety
///
/// As for `show_callback`, with `count` readable bytes at `buf`.
unsafe extern "C" fn store_callback<T: DiskOps>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: as in `show_callback`; sysfs passes `count` readable bytes.
    let (attribute, disk, data, input) = unsafe {
        let (disk, data) = DiskRef::<T>::from_sysfs_device(dev);
        (
            rust_attribute::<T>(attr),
            disk,
            data,
            core::slice::from_raw_parts(buf.cast::<u8>(), count),
        )
    };
    let Some(store) = attribute.store else {
        return EIO.to_errno() as isize;
    };
    match store(data, disk, input) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}
