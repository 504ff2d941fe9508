// SPDX-License-Identifier: GPL-2.0
//! sysfs tables and buffers: [`AttributeList`], [`AttributeGroup`] and [`AttributeGroups`] are
//! the static NULL-terminated tables `device_add_disk()` and classes take; [`SysfsBuf`] is the
//! page a show function writes into, with `scnprintf`'s truncation. The attributes themselves
//! are the disk's (`disk_attr.rs`) and the control class's (`class.rs`).

use core::ffi::CStr;
use kernel::bindings;
use kernel::ffi::c_char;

/// The C string behind `name`, in constant context (7.x's lints want the kernel's helper).
pub(super) const fn c_name(name: &'static CStr) -> *const c_char {
    #[cfg(not(zram_rs_const_char_ptr))]
    {
        name.as_ptr().cast()
    }
    #[cfg(zram_rs_const_char_ptr)]
    {
        kernel::str::as_char_ptr_in_const_context(name)
    }
}

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

/// A pointer to a static attribute, as an entry of an [`AttributeList`].
#[repr(transparent)]
pub(crate) struct AttrPtr(*mut bindings::attribute);

// SAFETY: points to a static attribute that sysfs only reads.
unsafe impl Sync for AttrPtr {}

impl AttrPtr {
    /// The entry for a static attribute: `attr` points to an `attribute` (or to a structure
    /// starting with one) that lives as long as the module.
    pub(super) const fn new(attr: *mut bindings::attribute) -> Self {
        Self(attr)
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
        Self(attribute_group(
            core::ptr::from_ref(&list.0)
                .cast_mut()
                .cast::<*mut bindings::attribute>(),
        ))
    }
}

/// An unnamed `attribute_group` of the NULL-terminated array `attrs`, everything else unset.
/// (7.x keeps `attrs` in an anonymous union with its `const` form.)
pub(super) const fn attribute_group(
    attrs: *mut *mut bindings::attribute,
) -> bindings::attribute_group {
    // SAFETY: all-zero is a valid `attribute_group`: NULL pointers, no callbacks.
    let mut group: bindings::attribute_group = unsafe { core::mem::zeroed() };
    #[cfg(not(zram_rs_sysfs_alt))]
    {
        group.attrs = attrs;
    }
    #[cfg(zram_rs_sysfs_alt)]
    {
        group.__bindgen_anon_2.attrs = attrs;
    }
    group
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
