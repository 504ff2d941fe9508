// SPDX-License-Identifier: GPL-2.0
//! sysfs attributes of a disk, with safe show/store functions: [`DeviceAttribute`] embeds the
//! C `device_attribute` next to the Rust functions and one generic trampoline finds them again;
//! [`AttributeList`], [`AttributeGroup`] and [`AttributeGroups`] are the static NULL-terminated
//! tables `device_add_disk()` takes; [`SysfsBuf`] is the page a show function writes into, with
//! `scnprintf`'s truncation.

use crate::disk::{DiskOps, DiskRef};
use core::cell::UnsafeCell;
use core::ffi::CStr;
use kernel::bindings;
use kernel::ffi::c_char;
use kernel::prelude::*;

const PAGE_SIZE: usize = bindings::PAGE_SIZE;

/// The page a show function fills. Output past `PAGE_SIZE - 1` bytes is cut off, as
/// `scnprintf(buf, PAGE_SIZE, ...)` does.
pub(crate) struct SysfsBuf<'a> {
    page: &'a mut [u8],
    len: usize,
}

impl<'a> SysfsBuf<'a> {
    /// A buffer over a sysfs page.
    pub(crate) fn new(page: &'a mut [u8]) -> Self {
        Self { page, len: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl core::fmt::Write for SysfsBuf<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.page.len().saturating_sub(1) - self.len;
        let n = s.len().min(room);
        self.page[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Formats a value into a sysfs page.
pub(crate) type ShowFn<T> = fn(&T, DiskRef<'_, T>, &mut SysfsBuf<'_>) -> Result;
/// Takes the bytes user space wrote (without a terminating NUL).
pub(crate) type StoreFn<T> = fn(&T, DiskRef<'_, T>, &[u8]) -> Result;

/// A disk attribute: the C structure sysfs sees, followed by the Rust functions behind it.
///
/// # Invariants
///
/// `raw.show` / `raw.store` are the trampolines of this type exactly when `show` / `store` are
/// set; the structure is only registered through [`AttributeList`] for disks of driver `T`.
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
        attr.name = name.as_ptr().cast::<c_char>();
        attr.mode = mode;
        // INVARIANT: trampolines are installed exactly for the functions that are present.
        Self {
            raw: UnsafeCell::new(bindings::device_attribute {
                attr,
                show: if show.is_some() {
                    Some(show_callback::<T>)
                } else {
                    None
                },
                store: if store.is_some() {
                    Some(store_callback::<T>)
                } else {
                    None
                },
            }),
            show,
            store,
        }
    }
}

/// A pointer to a static attribute, as an entry of an [`AttributeList`].
#[repr(transparent)]
pub(crate) struct AttrPtr(*mut bindings::attribute);

// SAFETY: points to a static attribute that sysfs only reads.
unsafe impl Sync for AttrPtr {}

impl AttrPtr {
    /// The entry for the static attribute `attr`.
    pub(crate) const fn of<T: DiskOps>(attr: &'static DeviceAttribute<T>) -> Self {
        // `DeviceAttribute` is `repr(C)` with the `device_attribute` (whose first field is the
        // `attribute`) first, so the pointers coincide.
        Self(
            core::ptr::from_ref(attr)
                .cast_mut()
                .cast::<bindings::attribute>(),
        )
    }

    /// The terminating NULL entry.
    pub(crate) const NULL: Self = Self(core::ptr::null_mut());
}

/// A NULL-terminated array of attributes; `N` counts the NULL.
pub(crate) struct AttributeList<const N: usize>(pub(crate) [AttrPtr; N]);

/// One unnamed `attribute_group`.
pub(crate) struct AttributeGroup(bindings::attribute_group);

// SAFETY: points to static data that sysfs only reads.
unsafe impl Sync for AttributeGroup {}

impl AttributeGroup {
    /// A group of the attributes in `list`, which must end with [`AttrPtr::NULL`].
    pub(crate) const fn new<const N: usize>(list: &'static AttributeList<N>) -> Self {
        Self(bindings::attribute_group {
            name: core::ptr::null(),
            is_visible: None,
            is_bin_visible: None,
            attrs: core::ptr::from_ref(&list.0)
                .cast_mut()
                .cast::<*mut bindings::attribute>(),
            bin_attrs: core::ptr::null_mut(),
        })
    }
}

/// The NULL-terminated group list a disk is added with.
pub(crate) struct AttributeGroups([*const bindings::attribute_group; 2]);

// SAFETY: points to static data that sysfs only reads.
unsafe impl Sync for AttributeGroups {}

impl AttributeGroups {
    /// The list holding just `group`.
    pub(crate) const fn new(group: &'static AttributeGroup) -> Self {
        Self([core::ptr::from_ref(&group.0), core::ptr::null()])
    }

    /// The pointer `device_add_disk()` takes; C only reads through it.
    pub(crate) fn as_ptr(&'static self) -> *mut *const bindings::attribute_group {
        core::ptr::from_ref(&self.0).cast_mut().cast()
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
/// Called by sysfs for an attribute registered through an [`AttributeList`] on a disk of
/// driver `T`, with a `PAGE_SIZE` buffer.
unsafe extern "C" fn show_callback<T: DiskOps>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: sysfs calls this only for attributes registered through `AttributeList`, i.e. a
    // static `DeviceAttribute<T>` of a disk of driver `T`, with a `PAGE_SIZE` buffer.
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
