// SPDX-License-Identifier: GPL-2.0
//! zram_rs: a Rust implementation of zram, the compressed RAM block device, ABI-compatible with
//! C zram in Linux 6.12 (`/dev/zramN`, `/sys/block/zramN/*`, `/sys/class/zram-control`, the
//! `num_devices` parameter, block major `zram`).
//!
//! This file is the crate root: the module's entry points and the registry of devices, which
//! hands out the lowest free id like C zram's idr.

use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};

mod attrs;
mod bio;
mod bounce;
mod control;
mod disk;
mod ffi;
mod sysfs;
mod table;
mod zram;
mod zspool;

mod compress;

// Pure logic shared with the host crate (`host/`), whose tests need these items public.
#[allow(unreachable_pub)]
mod algorithm;
#[allow(unreachable_pub)]
mod fill;
#[allow(unreachable_pub)]
mod parse;
#[allow(unreachable_pub)]
mod same;
#[allow(unreachable_pub)]
mod slot;
#[allow(unreachable_pub)]
mod stats;

use control::ControlClass;
use disk::{DiskDriver, GenDisk};
use zram::Zram;

module! {
    type: ZramRs,
    name: "zram_rs",
    author: "zram_rs developers",
    description: "Compressed RAM block device (zram) in Rust",
    license: "GPL",
}

/// The errno C returns for a failed `kstrto*` parse.
pub(crate) fn parse_errno(error: parse::ParseError) -> Error {
    match error {
        parse::ParseError::Invalid => EINVAL,
        parse::ParseError::Range => ERANGE,
    }
}

struct Devices {
    /// Slot `i` holds device `zram{i}`; `None` is a free id.
    disks: KVec<Option<GenDisk<Zram>>>,
    driver: Arc<DiskDriver<Zram>>,
}

/// All devices of the module. Lock order: the registry mutex comes before everything of a
/// device (`zram.rs`).
#[pin_data]
pub(crate) struct Registry {
    #[pin]
    devices: Mutex<Devices>,
}

impl Registry {
    /// Creates a device with the lowest free id and returns the id (`hot_add`).
    pub(crate) fn add(&self) -> Result<u32> {
        let mut devices = self.devices.lock();
        let id = devices
            .disks
            .iter()
            .position(Option::is_none)
            .unwrap_or(devices.disks.len());
        let id_u32 = u32::try_from(id).map_err(|_| ENOSPC)?;
        let disk = GenDisk::add(
            &devices.driver,
            id_u32,
            format_args!("zram{id}"),
            Zram::new(id_u32),
            &attrs::GROUPS,
        )
        .inspect_err(|_| pr_err!("Error allocating disk structure for device {id}\n"))?;
        if id == devices.disks.len() {
            devices.disks.push(Some(disk), GFP_KERNEL)?;
        } else {
            devices.disks[id] = Some(disk);
        }
        pr_info!("Added device: zram{id}\n");
        Ok(id_u32)
    }

    /// Removes device `id` (`hot_remove`): `ENODEV` if there is none, `EBUSY` while it is open.
    pub(crate) fn remove(&self, id: u32) -> Result {
        let mut devices = self.devices.lock();
        let entry = devices.disks.get_mut(id as usize).ok_or(ENODEV)?;
        let disk = entry.as_ref().ok_or(ENODEV)?;
        let zram = disk.data();
        // A claim held by a running `reset` is fine: deleting the disk waits for it.
        if let Ok(claim) = disk.disk().claim() {
            zram.reset_device(&claim);
            claim.keep_until_deleted();
        } else if disk.disk().with_open_mutex(|openers| openers > 0) {
            return Err(EBUSY);
        }
        // Deletes the disk (waiting for its attribute callbacks), then frees the device.
        *entry = None;
        pr_info!("Removed device: zram{id}\n");
        Ok(())
    }
}

struct ZramRs {
    // Dropped first: no hot_add or hot_remove can run while the devices go away.
    _control: ControlClass,
    _registry: Arc<Registry>,
}

impl kernel::Module for ZramRs {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let driver = DiskDriver::register(module, c_str!("zram")).inspect_err(|_| {
            pr_err!("Unable to get major number\n");
        })?;
        let registry = Arc::pin_init(
            pin_init!(Registry {
                devices <- new_mutex!(Devices { disks: KVec::new(), driver }, "zram_rs::devices"),
            }),
            GFP_KERNEL,
        )?;
        let control = ControlClass::register(registry.clone())?;
        for _ in 0..ffi::num_devices_param() {
            registry.add()?;
        }
        Ok(Self {
            _control: control,
            _registry: registry,
        })
    }
}
