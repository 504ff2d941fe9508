// SPDX-License-Identifier: GPL-2.0
//! sysfs buffers and groups: [`SysfsBuf`] is the page a show function writes into, with
//! `scnprintf`'s truncation; [`attribute_group`] builds the C group around an attribute table.
//! The attributes and their tables are the disk's (`disk_attr.rs`) and the control class's
//! (`class.rs`).

use core::ffi::CStr;
use core::marker::PhantomData;
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

    /// Appends `bytes` as they are (a path, say), as much as fits.
    pub(crate) fn write_bytes(&mut self, bytes: &[u8]) {
        let room = self.page.len().saturating_sub(1) - self.len;
        let n = bytes.len().min(room);
        self.page[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }
}

impl core::fmt::Write for SysfsBuf<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.write_bytes(s.as_bytes());
        Ok(())
    }
}

/// A pointer to a static attribute of driver `T` (the type its show and store functions
/// expect), as an entry of an [`AttributeList`].
#[repr(transparent)]
pub(crate) struct AttrPtr<T>(*mut bindings::attribute, PhantomData<fn() -> T>);

// SAFETY: points to a static attribute that sysfs only reads.
unsafe impl<T> Sync for AttrPtr<T> {}

impl<T> AttrPtr<T> {
    /// The entry for a static attribute: `attr` points to an `attribute` (or to a structure
    /// starting with one) of driver `T` that lives as long as the module.
    pub(super) const fn new(attr: *mut bindings::attribute) -> Self {
        Self(attr, PhantomData)
    }

    const NULL: Self = Self(core::ptr::null_mut(), PhantomData);
}

/// The attributes of driver `T` as the NULL-terminated array sysfs reads: the present entries
/// in order, then NULLs. Terminated by construction (`end` is always NULL), and it holds only
/// attributes of driver `T`, whose callbacks then find the data they expect.
#[repr(C)]
pub(crate) struct AttributeList<T, const N: usize> {
    attrs: [AttrPtr<T>; N],
    end: AttrPtr<T>,
}

impl<T, const N: usize> AttributeList<T, N> {
    /// The list of the present `entries`, in their order; an absent one (an attribute this
    /// kernel's ABI does not have) takes no place among them.
    pub(crate) const fn new(entries: [Option<AttrPtr<T>>; N]) -> Self {
        let mut attrs = [Self::NULL_ENTRY; N];
        let mut i = 0;
        let mut present = 0;
        while i < N {
            if let Some(entry) = &entries[i] {
                attrs[present] = AttrPtr::new(entry.0);
                present += 1;
            }
            i += 1;
        }
        Self {
            attrs,
            end: AttrPtr::NULL,
        }
    }

    const NULL_ENTRY: AttrPtr<T> = AttrPtr::NULL;
}

/// One unnamed `attribute_group` of the attributes of driver `T`.
pub(crate) struct AttributeGroup<T>(bindings::attribute_group, PhantomData<fn() -> T>);

// SAFETY: points to static data that sysfs only reads.
unsafe impl<T> Sync for AttributeGroup<T> {}

impl<T> AttributeGroup<T> {
    /// A group of the attributes in `list`.
    pub(crate) const fn new<const N: usize>(list: &'static AttributeList<T, N>) -> Self {
        // `AttributeList` is `repr(C)`: `attrs` then `end` (NULL) form one array of pointers.
        Self(
            attribute_group(
                core::ptr::from_ref(list)
                    .cast_mut()
                    .cast::<*mut bindings::attribute>(),
            ),
            PhantomData,
        )
    }
}

/// The NULL-terminated group list a disk of driver `T` is added with.
pub(crate) struct AttributeGroups<T>(
    [*const bindings::attribute_group; 2],
    PhantomData<fn() -> T>,
);

// SAFETY: points to static data that sysfs only reads.
unsafe impl<T> Sync for AttributeGroups<T> {}

impl<T> AttributeGroups<T> {
    /// The list holding just `group`.
    pub(crate) const fn new(group: &'static AttributeGroup<T>) -> Self {
        Self(
            [core::ptr::from_ref(&group.0), core::ptr::null()],
            PhantomData,
        )
    }

    /// The pointer `device_add_disk()` takes; C only reads through it.
    pub(super) fn as_ptr(&'static self) -> *mut *const bindings::attribute_group {
        core::ptr::from_ref(&self.0).cast_mut().cast()
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
