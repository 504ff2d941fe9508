// SPDX-License-Identifier: GPL-2.0
//! The `/sys/block/zramN/` attributes: their names, modes, input parsing and output formats,
//! each matching C zram in 6.12 (see `Documentation/zram_rs.rst` for the list).

use crate::disk::DiskRef;
use crate::parse;
use crate::sysfs::{
    AttrPtr, AttributeGroup, AttributeGroups, AttributeList, DeviceAttribute, SysfsBuf,
};
use crate::zram::Zram;
use core::fmt::Write;
use kernel::prelude::*;

fn write_result(result: core::fmt::Result) -> Result {
    result.map_err(|_| EINVAL)
}

fn disksize_show(zram: &Zram, _disk: DiskRef<'_>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", zram.disksize()))
}

fn disksize_store(zram: &Zram, disk: DiskRef<'_>, input: &[u8]) -> Result {
    let (requested, _) = parse::memparse(input);
    zram.initialise(disk, requested)
}

fn initstate_show(zram: &Zram, _disk: DiskRef<'_>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", u32::from(zram.disksize() != 0)))
}

fn reset_store(zram: &Zram, disk: DiskRef<'_>, input: &[u8]) -> Result {
    let value = parse::kstrtou16(input, 10).map_err(crate::parse_errno)?;
    if value == 0 {
        return Err(EINVAL);
    }
    zram.reset(disk)
}

fn mm_stat_show(zram: &Zram, _disk: DiskRef<'_>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(zram.mm_stat().write_to(out))
}

fn io_stat_show(zram: &Zram, _disk: DiskRef<'_>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(zram.io_stat().write_to(out))
}

static DISKSIZE: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"disksize",
    0o644,
    Some(disksize_show),
    Some(disksize_store),
);
static INITSTATE: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"initstate", 0o444, Some(initstate_show), None);
static RESET: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"reset", 0o200, None, Some(reset_store));
static MM_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"mm_stat", 0o444, Some(mm_stat_show), None);
static IO_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"io_stat", 0o444, Some(io_stat_show), None);

static LIST: AttributeList<6> = AttributeList([
    AttrPtr::of(&DISKSIZE),
    AttrPtr::of(&INITSTATE),
    AttrPtr::of(&RESET),
    AttrPtr::of(&MM_STAT),
    AttrPtr::of(&IO_STAT),
    AttrPtr::NULL,
]);
static GROUP: AttributeGroup = AttributeGroup::new(&LIST);

/// The attribute groups every zram_rs disk is added with.
pub(crate) static GROUPS: AttributeGroups = AttributeGroups::new(&GROUP);
