// SPDX-License-Identifier: GPL-2.0
//! zram_rs: a Rust implementation of zram, the compressed RAM block device, ABI-compatible with
//! C zram of the kernel it is built for, Linux 6.12 or 7.3 (`/dev/zramN`,
//! `/sys/block/zramN/*`, `/sys/class/zram-control`, the `num_devices` parameter, block major
//! `zram`).
//!
//! This file is the crate root: the module's entry points and the registry of devices, which
//! hands out the lowest free id like C zram's idr.

use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};

mod abi;
mod attrs;
mod comp;
mod errno;
mod kapi;
mod table;
mod zram;

// Pure logic shared with the host crate (`host/`), whose tests need these items public.
#[allow(unreachable_pub)]
mod blocks;
#[allow(unreachable_pub)]
mod fill;
#[allow(unreachable_pub)]
mod idle;
#[allow(unreachable_pub)]
mod parse;
#[allow(unreachable_pub)]
mod recompress_args;
#[allow(unreachable_pub)]
mod same;
#[allow(unreachable_pub)]
mod slot;
#[allow(unreachable_pub)]
mod stat_format;
#[allow(unreachable_pub)]
mod tokens;
#[allow(unreachable_pub)]
mod unit;
#[allow(unreachable_pub)]
mod words;
#[allow(unreachable_pub)]
mod writeback_args;

use kapi::bdev::DeferredQueue;
use kapi::class::{ControlClass, ControlOps};
use kapi::debugfs;
use kapi::disk::{DiskDriver, GenDisk};
use zram::Zram;

/// C zram's user ABI of the kernel built against: the only place that names a kernel series.
#[cfg(not(any(zram_abi_7_2, zram_abi_7_3)))]
pub(crate) type Kernel = abi::Linux<6, 12>;
/// C zram's user ABI of the kernel built against: the only place that names a kernel series.
#[cfg(zram_abi_7_2)]
pub(crate) type Kernel = abi::Linux<7, 2>;
/// C zram's user ABI of the kernel built against: the only place that names a kernel series.
#[cfg(zram_abi_7_3)]
pub(crate) type Kernel = abi::Linux<7, 3>;

#[cfg(not(zram_rs_module_authors))]
module! {
    type: ZramRs,
    name: "zram_rs",
    author: "zram_rs developers",
    description: "Compressed RAM block device (zram) in Rust",
    license: "GPL",
}

// 7.x's `module!` takes a list of authors.
#[cfg(zram_rs_module_authors)]
module! {
    type: ZramRs,
    name: "zram_rs",
    authors: ["zram_rs developers"],
    description: "Compressed RAM block device (zram) in Rust",
    license: "GPL",
}

struct Devices {
    /// Slot `i` holds device `zram{i}`; `None` is a free id.
    disks: KVec<Option<GenDisk<Zram>>>,
    driver: Arc<DiskDriver<Zram>>,
    /// debugfs `zram/`, where each device gets `zramN/block_state`; `None` without debugfs.
    debugfs: Option<Arc<debugfs::Dir>>,
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
        let mut disk = GenDisk::add(
            &devices.driver,
            id_u32,
            format_args!("zram{id}"),
            Zram::new(id_u32),
            &attrs::GROUPS,
        )
        .inspect_err(|_| pr_err!("Error allocating disk structure for device {id}\n"))?;
        if let (Some(root), Ok(name)) = (
            &devices.debugfs,
            CString::try_from_fmt(format_args!("zram{id}")),
        ) {
            disk.add_debugfs(root, &name, c_str!("block_state"));
        }
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
        // Waits for a running `reset`; `EBUSY` while the disk is open.
        let claim = disk.disk().claim_for_removal()?;
        zram.reset_device(&claim);
        claim.keep_until_deleted();
        // Deletes the disk (waiting for its attribute callbacks), then frees the device.
        *entry = None;
        pr_info!("Removed device: zram{id}\n");
        Ok(())
    }
}

impl ControlOps for Registry {
    fn hot_add(&self) -> Result<u32> {
        self.add()
    }

    fn hot_remove(&self, input: &[u8]) -> Result {
        let id = parse::kstrtoint(input, 10)?;
        self.remove(u32::try_from(id).map_err(|_| EINVAL)?)
    }
}

struct ZramRs {
    // Dropped first: no hot_add or hot_remove can run while the devices go away.
    _control: ControlClass,
    _registry: Arc<Registry>,
    // Dropped last, once no disk can be read: runs the reads' work still queued.
    _deferred: DeferredQueue,
}

impl kernel::Module for ZramRs {
    fn init(module: &'static ThisModule) -> Result<Self> {
        kapi::page_map::check()?;
        kapi::cpu::check()?;
        let deferred = DeferredQueue::new()?;
        let driver = DiskDriver::register(module, c_str!("zram")).inspect_err(|_| {
            pr_err!("Unable to get major number\n");
        })?;
        let registry = Arc::pin_init(
            pin_init!(Registry {
                devices <- new_mutex!(
                    Devices {
                        disks: KVec::new(),
                        driver,
                        // C zram's debugfs files come with `CONFIG_ZRAM_MEMORY_TRACKING`.
                        debugfs: if cfg!(zram_rs_memory_tracking) {
                            debugfs::Dir::new(c_str!("zram"), None)
                        } else {
                            None
                        },
                    },
                    "zram_rs::devices"
                ),
            }),
            GFP_KERNEL,
        )?;
        let control = ControlClass::register(registry.clone())?;
        for _ in 0..kapi::num_devices_param() {
            registry.add()?;
        }
        Ok(Self {
            _control: control,
            _registry: registry,
            _deferred: deferred,
        })
    }
}
