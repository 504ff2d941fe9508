// SPDX-License-Identifier: GPL-2.0
//! The `/sys/block/zramN/` attributes: their names, modes, input parsing and output formats,
//! each matching C zram in 6.12 (see `Documentation/zram_rs.rst` for the list).

use crate::algorithm;
use crate::disk::DiskRef;
use crate::ffi;
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

fn disksize_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", zram.disksize()))
}

fn disksize_store(zram: &Zram, disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let (requested, _) = parse::memparse(input);
    zram.initialise(disk, requested)
}

fn initstate_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", u32::from(zram.disksize() != 0)))
}

fn reset_store(zram: &Zram, disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let value = parse::kstrtou16(input, 10).map_err(crate::parse_errno)?;
    if value == 0 {
        return Err(EINVAL);
    }
    zram.reset(disk)
}

fn mm_stat_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(zram.mm_stat().write_to(out))
}

fn io_stat_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(zram.io_stat().write_to(out))
}

fn debug_stat_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(zram.debug_stat().write_to(out))
}

fn comp_algorithm_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(zram.write_algorithms(out))
}

fn comp_algorithm_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    zram.set_algorithm(input)
}

fn algorithm_params_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let params = algorithm::parse_algorithm_params(input).map_err(crate::parse_errno)?;
    zram.set_algorithm_params(params)
}

fn max_comp_streams_show(_zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", ffi::num_online_cpus()))
}

/// Accepted and ignored, as in C zram since streams became per CPU.
fn max_comp_streams_store(_zram: &Zram, _disk: DiskRef<'_, Zram>, _input: &[u8]) -> Result {
    Ok(())
}

fn mem_limit_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let (limit, parsed) = parse::memparse(input);
    if parsed == 0 {
        return Err(EINVAL);
    }
    zram.set_mem_limit(limit);
    Ok(())
}

fn mem_used_max_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    match parse::kstrtoull(input, 10) {
        Ok(0) => {
            zram.reset_mem_used_max();
            Ok(())
        }
        _ => Err(EINVAL),
    }
}

/// zram_rs extension: `"%8llu %8llu\n"`, zero pages and non-zero same-filled pages stored.
fn same_stat_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    let (zero, nonzero) = zram.same_stat();
    write_result(writeln!(out, "{zero:>8} {nonzero:>8}"))
}

/// zram_rs extension: `1` (default) looks for same-filled pages, `0` compresses them like any
/// other page.
fn same_detection_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", u32::from(zram.same_detection())))
}

fn same_detection_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    match parse::kstrtoull(input, 10).map_err(crate::parse_errno)? {
        0 => zram.set_same_detection(false),
        1 => zram.set_same_detection(true),
        _ => return Err(EINVAL),
    }
    Ok(())
}

/// `all` marks every stored page idle. C zram also takes an age in seconds when built with
/// `CONFIG_ZRAM_TRACK_ENTRY_ACTIME`; zram_rs keeps no access times, so like C without it,
/// anything but `all` is `EINVAL`.
fn idle_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    if !algorithm::sysfs_streq(parse::c_str(input), b"all") {
        return Err(EINVAL);
    }
    zram.mark_all_idle()
}

fn compact_store(zram: &Zram, _disk: DiskRef<'_, Zram>, _input: &[u8]) -> Result {
    zram.compact()
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
static COMPACT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"compact", 0o200, None, Some(compact_store));
static MEM_LIMIT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"mem_limit", 0o200, None, Some(mem_limit_store));
static MEM_USED_MAX: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"mem_used_max", 0o200, None, Some(mem_used_max_store));
static IDLE: DeviceAttribute<Zram> = DeviceAttribute::new(c"idle", 0o200, None, Some(idle_store));
static MAX_COMP_STREAMS: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"max_comp_streams",
    0o644,
    Some(max_comp_streams_show),
    Some(max_comp_streams_store),
);
static COMP_ALGORITHM: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"comp_algorithm",
    0o644,
    Some(comp_algorithm_show),
    Some(comp_algorithm_store),
);
static ALGORITHM_PARAMS: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"algorithm_params",
    0o200,
    None,
    Some(algorithm_params_store),
);
static IO_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"io_stat", 0o444, Some(io_stat_show), None);
static MM_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"mm_stat", 0o444, Some(mm_stat_show), None);
static DEBUG_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"debug_stat", 0o444, Some(debug_stat_show), None);

static SAME_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"same_stat", 0o444, Some(same_stat_show), None);
static SAME_DETECTION: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"same_detection",
    0o644,
    Some(same_detection_show),
    Some(same_detection_store),
);

/// In C zram's order, then zram_rs's extensions.
static LIST: AttributeList<16> = AttributeList([
    AttrPtr::of(&DISKSIZE),
    AttrPtr::of(&INITSTATE),
    AttrPtr::of(&RESET),
    AttrPtr::of(&COMPACT),
    AttrPtr::of(&MEM_LIMIT),
    AttrPtr::of(&MEM_USED_MAX),
    AttrPtr::of(&IDLE),
    AttrPtr::of(&MAX_COMP_STREAMS),
    AttrPtr::of(&COMP_ALGORITHM),
    AttrPtr::of(&IO_STAT),
    AttrPtr::of(&MM_STAT),
    AttrPtr::of(&DEBUG_STAT),
    AttrPtr::of(&ALGORITHM_PARAMS),
    AttrPtr::of(&SAME_STAT),
    AttrPtr::of(&SAME_DETECTION),
    AttrPtr::NULL,
]);
static GROUP: AttributeGroup = AttributeGroup::new(&LIST);

/// The attribute groups every zram_rs disk is added with.
pub(crate) static GROUPS: AttributeGroups = AttributeGroups::new(&GROUP);
