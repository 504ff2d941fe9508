// SPDX-License-Identifier: GPL-2.0
//! The `zram-control` class: `/sys/class/zram-control/hot_add` (reading it creates a device and
//! returns its id; mode 0400 as in C) and `hot_remove` (writing an id removes that device).
//! What the two do is the driver's ([`ControlOps`]); this file owns the C class and its
//! callbacks.
//!
//! Class attribute callbacks get no context pointer, so the operations they call are published
//! in a static for exactly as long as the class is registered; [`ControlClass`] owns that
//! window.

use super::sysfs::{attribute_group, c_name, SysfsBuf};
use core::cell::UnsafeCell;
use core::fmt::Write;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::bindings;
use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::sync::Arc;

/// What `hot_add` and `hot_remove` do.
pub(crate) trait ControlOps: Send + Sync {
    /// Creates a device and returns its id (a read of `hot_add`).
    fn hot_add(&self) -> Result<u32>;
    /// Removes the device named by `input`, the bytes written to `hot_remove`.
    fn hot_remove(&self, input: &[u8]) -> Result;
}

/// The operations, boxed so that a thin pointer reaches them.
type Published = KBox<Arc<dyn ControlOps>>;

/// The operations the callbacks use while the class is registered, or NULL.
static OPS: AtomicPtr<Arc<dyn ControlOps>> = AtomicPtr::new(core::ptr::null_mut());

/// A C structure that C code owns after registration and Rust never touches again.
#[repr(transparent)]
struct Shared<T>(UnsafeCell<T>);

// SAFETY: written only by the kernel's class code, which serialises registration; Rust only
// passes its address.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    const fn get(&self) -> *mut T {
        self.0.get()
    }
}

const fn attribute(name: &'static core::ffi::CStr, mode: u16) -> bindings::attribute {
    // SAFETY: all-zero is a valid `attribute`.
    let mut attr: bindings::attribute = unsafe { core::mem::zeroed() };
    attr.name = c_name(name);
    attr.mode = mode;
    attr
}

static HOT_ADD: Shared<bindings::class_attribute> =
    Shared(UnsafeCell::new(bindings::class_attribute {
        // Reading creates a device, so only root may read it.
        attr: attribute(c"hot_add", 0o400),
        show: Some(hot_add_show),
        store: None,
    }));

static HOT_REMOVE: Shared<bindings::class_attribute> =
    Shared(UnsafeCell::new(bindings::class_attribute {
        attr: attribute(c"hot_remove", 0o200),
        show: None,
        store: Some(hot_remove_store),
    }));

struct ClassTables {
    attrs: [*mut bindings::attribute; 3],
    group: bindings::attribute_group,
    groups: [*const bindings::attribute_group; 2],
}

static TABLES: Shared<ClassTables> = Shared(UnsafeCell::new(ClassTables {
    // `class_attribute` starts with its `attribute`.
    attrs: [
        HOT_ADD.get().cast(),
        HOT_REMOVE.get().cast(),
        core::ptr::null_mut(),
    ],
    // SAFETY: only the address of a field of the static is taken.
    group: attribute_group(unsafe { &raw mut (*TABLES.get()).attrs }.cast()),
    groups: [
        // SAFETY: as above.
        unsafe { &raw const (*TABLES.get()).group },
        core::ptr::null(),
    ],
}));

static CLASS: Shared<bindings::class> = Shared(UnsafeCell::new(class()));

/// The `zram-control` class, everything but its name and attribute groups unset.
const fn class() -> bindings::class {
    // SAFETY: all-zero is a valid `class`: NULL pointers, no callbacks.
    let mut class: bindings::class = unsafe { core::mem::zeroed() };
    class.name = c_name(c"zram-control");
    // SAFETY: only the address of a field of the static is taken.
    let groups = unsafe { &raw const (*TABLES.get()).groups };
    // 7.x declares the list `const struct attribute_group *const *`.
    #[cfg(not(zram_rs_sysfs_alt))]
    {
        class.class_groups = groups.cast_mut().cast();
    }
    #[cfg(zram_rs_sysfs_alt)]
    {
        class.class_groups = groups.cast();
    }
    class
}

/// The registered `zram-control` class; unregistered on drop.
///
/// # Invariants
///
/// While a `ControlClass` exists, the class is registered and `OPS` holds a [`Published`] box
/// (from `KBox::into_raw`).
pub(crate) struct ControlClass {
    _private: (),
}

impl ControlClass {
    /// Publishes `ops` to the callbacks and registers the class. Fails with `EEXIST` when
    /// another zram driver (C `zram.ko`) already owns the class name.
    pub(crate) fn register(ops: Arc<dyn ControlOps>) -> Result<Self> {
        let raw = KBox::into_raw(Published::new(ops, GFP_KERNEL)?);
        if OPS
            .compare_exchange(
                core::ptr::null_mut(),
                raw,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            // SAFETY: `raw` came from `KBox::into_raw` just above and was not published.
            drop(unsafe { Published::from_raw(raw) });
            return Err(EBUSY);
        }
        // SAFETY: `CLASS` is a valid, static class description.
        let ret = unsafe { bindings::class_register(CLASS.get()) };
        if ret != 0 {
            pr_err!("Unable to register zram-control class\n");
            Self::unpublish();
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered, and `OPS` holds the box.
        Ok(Self { _private: () })
    }

    fn unpublish() {
        let raw = OPS.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !raw.is_null() {
            // SAFETY: a non-NULL `OPS` always holds a box from `KBox::into_raw`, and the swap
            // took it out so nobody else releases it.
            drop(unsafe { Published::from_raw(raw) });
        }
    }
}

impl Drop for ControlClass {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant). Unregistering removes the attribute files and
        // waits for running callbacks, so none uses `OPS` after this.
        unsafe { bindings::class_unregister(CLASS.get()) };
        Self::unpublish();
    }
}

/// The operations, inside a class callback.
fn ops<'a>() -> Option<&'a dyn ControlOps> {
    let raw = OPS.load(Ordering::Acquire);
    // SAFETY: callbacks run only while the class is registered, and `OPS` keeps its box until
    // after `class_unregister()` (invariant of `ControlClass`).
    let published = unsafe { raw.as_ref() }?;
    Some(&**published)
}

/// `hot_add`'s show callback.
///
/// # Safety
///
/// Called by sysfs with a `PAGE_SIZE` buffer.
unsafe extern "C" fn hot_add_show(
    _class: *const bindings::class,
    _attr: *const bindings::class_attribute,
    buf: *mut c_char,
) -> isize {
    let Some(ops) = ops() else {
        return ENODEV.to_errno() as isize;
    };
    match ops.hot_add() {
        Ok(id) => {
            let length = bindings::PAGE_SIZE;
            // SAFETY: sysfs passes a `PAGE_SIZE` buffer.
            let page = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), length) };
            let mut out = SysfsBuf::new(page);
            let _ = writeln!(out, "{id}");
            out.len() as isize
        }
        Err(e) => e.to_errno() as isize,
    }
}

/// `hot_remove`'s store callback.
///
/// # Safety
///
/// Called by sysfs with `count` readable bytes at `buf`.
unsafe extern "C" fn hot_remove_store(
    _class: *const bindings::class,
    _attr: *const bindings::class_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: sysfs passes `count` readable bytes.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    match ops().ok_or(ENODEV).and_then(|ops| ops.hot_remove(input)) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}
