// SPDX-License-Identifier: GPL-2.0
//! The `zram-control` class: `/sys/class/zram-control/hot_add` (reading it creates a device and
//! returns its id; mode 0400 as in C) and `hot_remove` (writing an id removes that device).
//!
//! Class attribute callbacks get no context pointer, so the registry they act on is published in
//! a static for exactly as long as the class is registered; [`ControlClass`] owns that window.

use crate::parse;
use crate::sysfs::SysfsBuf;
use crate::Registry;
use core::cell::UnsafeCell;
use core::fmt::Write;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::bindings;
use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The registry the callbacks use while the class is registered, or NULL.
static REGISTRY: AtomicPtr<Registry> = AtomicPtr::new(core::ptr::null_mut());

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
    attr.name = name.as_ptr().cast::<c_char>();
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
    group: bindings::attribute_group {
        name: core::ptr::null(),
        is_visible: None,
        is_bin_visible: None,
        // SAFETY: only the address of a field of the static is taken.
        attrs: unsafe { &raw mut (*TABLES.get()).attrs }.cast(),
        bin_attrs: core::ptr::null_mut(),
    },
    groups: [
        // SAFETY: as above.
        unsafe { &raw const (*TABLES.get()).group },
        core::ptr::null(),
    ],
}));

static CLASS: Shared<bindings::class> = Shared(UnsafeCell::new(bindings::class {
    name: c"zram-control".as_ptr().cast(),
    // SAFETY: only the address of a field of the static is taken.
    class_groups: unsafe { &raw mut (*TABLES.get()).groups }.cast(),
    dev_groups: core::ptr::null_mut(),
    dev_uevent: None,
    devnode: None,
    class_release: None,
    dev_release: None,
    shutdown_pre: None,
    ns_type: core::ptr::null(),
    namespace: None,
    get_ownership: None,
    pm: core::ptr::null(),
}));

/// The registered `zram-control` class; unregistered on drop.
///
/// # Invariants
///
/// While a `ControlClass` exists, the class is registered and `REGISTRY` holds a reference
/// (from `Arc::into_raw`) to `registry`.
pub(crate) struct ControlClass {
    _registry: Arc<Registry>,
}

impl ControlClass {
    /// Publishes `registry` to the callbacks and registers the class. Fails with `EEXIST` when
    /// another zram driver (C `zram.ko`) already owns the class name.
    pub(crate) fn register(registry: Arc<Registry>) -> Result<Self> {
        let raw = Arc::into_raw(registry.clone()).cast_mut();
        if REGISTRY
            .compare_exchange(
                core::ptr::null_mut(),
                raw,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            // SAFETY: `raw` came from `Arc::into_raw` just above and was not published.
            drop(unsafe { Arc::from_raw(raw) });
            return Err(EBUSY);
        }
        // SAFETY: `CLASS` is a valid, static class description.
        let ret = unsafe { bindings::class_register(CLASS.get()) };
        if ret != 0 {
            pr_err!("Unable to register zram-control class\n");
            Self::unpublish();
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered, and `REGISTRY` holds the reference.
        Ok(Self {
            _registry: registry,
        })
    }

    fn unpublish() {
        let raw = REGISTRY.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !raw.is_null() {
            // SAFETY: a non-NULL `REGISTRY` always holds a reference from `Arc::into_raw`, and
            // the swap took it out so nobody else releases it.
            drop(unsafe { Arc::from_raw(raw) });
        }
    }
}

impl Drop for ControlClass {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant). Unregistering removes the attribute files and
        // waits for running callbacks, so none uses `REGISTRY` after this.
        unsafe { bindings::class_unregister(CLASS.get()) };
        Self::unpublish();
    }
}

/// The registry, inside a class callback.
fn registry<'a>() -> Option<&'a Registry> {
    let raw = REGISTRY.load(Ordering::Acquire);
    // SAFETY: callbacks run only while the class is registered, and `REGISTRY` keeps its
    // reference until after `class_unregister()` (invariant of `ControlClass`).
    unsafe { raw.as_ref() }
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
    let Some(registry) = registry() else {
        return ENODEV.to_errno() as isize;
    };
    match registry.add() {
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
    let result = parse::kstrtoint(input, 10)
        .map_err(crate::parse_errno)
        .and_then(|id| {
            if id < 0 {
                return Err(EINVAL);
            }
            registry().ok_or(ENODEV)?.remove(id as u32)
        });
    match result {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}
