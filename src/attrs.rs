// SPDX-License-Identifier: GPL-2.0
//! The `/sys/block/zramN/` attributes: their names, modes, input parsing and output formats,
//! each matching C zram of the kernel built for, 6.12 or 7.3 (see `Documentation/zram_rs.rst`).

use crate::abi::Abi;
use crate::kapi::disk::DiskRef;
use crate::kapi::disk_attr::DeviceAttribute;
use crate::kapi::sysfs::{AttrPtr, AttributeGroup, AttributeGroups, AttributeList, SysfsBuf};
use crate::parse;
use crate::tokens;
use crate::unit::UnitSize;
use crate::zram::Zram;
use crate::Kernel;
use core::fmt::Write;
use kernel::prelude::*;

fn write_result(result: core::fmt::Result) -> Result {
    result.map_err(|_| EINVAL)
}

fn disksize_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", zram.disksize()))
}

fn disksize_store(zram: &Zram, disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let (requested, _) = Kernel::memparse(input);
    zram.initialise(disk, requested)
}

fn initstate_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", u32::from(zram.initialised())))
}

fn reset_store(zram: &Zram, disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let value = parse::kstrtou16(input, 10)?;
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

fn recomp_algorithm_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(zram.write_recomp_algorithms(out))
}

fn recomp_algorithm_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    zram.set_recomp_algorithm(input)
}

fn recompress_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    zram.recompress(input)
}

fn algorithm_params_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    zram.set_algorithm_params(Kernel::algorithm_params(input)?)
}

fn max_comp_streams_show(_zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", crate::kapi::cpu::num_online_cpus()))
}

/// Accepted and ignored, as in C zram since streams became per CPU.
fn max_comp_streams_store(_zram: &Zram, _disk: DiskRef<'_, Zram>, _input: &[u8]) -> Result {
    Ok(())
}

fn mem_limit_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let (limit, parsed) = Kernel::memparse(input);
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

/// zram_rs extension: `"%8llu\n"`, page reads that waited for a decompression context.
fn read_stat_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{:>8}", zram.read_stat()))
}

/// zram_rs extension: `1` (default) looks for same-filled pages, `0` compresses them like any
/// other page.
fn same_detection_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", u32::from(zram.same_detection())))
}

fn same_detection_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    match parse::kstrtoull(input, 10)? {
        0 => zram.set_same_detection(false),
        1 => zram.set_same_detection(true),
        _ => return Err(EINVAL),
    }
    Ok(())
}

/// zram_rs extension: `"%8llu %8llu %8llu %8llu %8llu %8llu %8llu %8llu\n"`, compression
/// units' objects stored, pages stored in them, units decompressed for reads, reads of units'
/// pages, whole units stored page by page, reads of units' pages by requests that cover part
/// of the unit, units' pages split off by writeback, units decompressed straight into a read
/// bio's pages.
fn unit_stat_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    let [objects, pages, decompressions, reads, by_pages, part_reads, split, runs] =
        zram.unit_stat();
    write_result(writeln!(
        out,
        "{objects:>8} {pages:>8} {decompressions:>8} {reads:>8} {by_pages:>8} {part_reads:>8} \
         {split:>8} {runs:>8}"
    ))
}

/// zram_rs extension: the compression unit in bytes, `"%llu\n"` (the page size by default);
/// 4096, 16384 or 65536 from the page size up, before `disksize` (`EBUSY` after), anything
/// else `EINVAL`.
fn compress_unit_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    let bytes = zram.unit_size().bytes(kernel::page::PAGE_SHIFT as u32);
    write_result(writeln!(out, "{bytes}"))
}

fn compress_unit_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    zram.set_unit_size(UnitSize::parse(input, kernel::page::PAGE_SHIFT as u32)?)
}

/// `all` marks every stored page idle; an age in seconds marks the pages not accessed for at
/// least that long and unmarks the others (where C zram keeps access times,
/// `CONFIG_ZRAM_TRACK_ENTRY_ACTIME`: without, anything but `all` is `EINVAL`). The kernel's
/// ABI turns the age into a cutoff ([`Abi::idle_cutoff`]).
fn idle_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    if !cfg!(zram_rs_track_entry_actime) && !tokens::sysfs_streq(parse::c_str(input), b"all") {
        return Err(EINVAL);
    }
    match Kernel::idle_cutoff(input)? {
        Some(cutoff) => zram.mark_idle(cutoff),
        None => Ok(()),
    }
}

fn compact_store(zram: &Zram, _disk: DiskRef<'_, Zram>, _input: &[u8]) -> Result {
    zram.compact()
}

/// The backing device's path, or `none`.
fn backing_dev_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    zram.with_backing_dev(|path| match path {
        Some(path) => {
            out.write_bytes(path);
            out.write_bytes(b"\n");
        }
        None => out.write_bytes(b"none\n"),
    })
}

fn backing_dev_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    zram.set_backing_dev(input)
}

fn writeback_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    zram.writeback(input)
}

fn writeback_limit_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    write_result(writeln!(out, "{}", zram.writeback_limit()))
}

/// 4 KiB units; C answers any parse failure with `EINVAL`.
fn writeback_limit_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let limit = parse::kstrtoull(input, 10).map_err(|_| EINVAL)?;
    zram.set_writeback_limit(limit);
    Ok(())
}

fn writeback_limit_enable_show(
    zram: &Zram,
    _disk: DiskRef<'_, Zram>,
    out: &mut SysfsBuf<'_>,
) -> Result {
    write_result(writeln!(
        out,
        "{}",
        u32::from(zram.writeback_limit_enabled())
    ))
}

/// Any number; non-zero enables (C stores it in a `bool`).
fn writeback_limit_enable_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let value = parse::kstrtoull(input, 10).map_err(|_| EINVAL)?;
    zram.set_writeback_limit_enabled(value != 0);
    Ok(())
}

fn writeback_batch_size_show(
    zram: &Zram,
    _disk: DiskRef<'_, Zram>,
    out: &mut SysfsBuf<'_>,
) -> Result {
    write_result(writeln!(out, "{}", zram.writeback_batch_size()))
}

/// A `u32` above 0 (C's `kstrtouint()`); C answers any parse failure with `EINVAL`.
fn writeback_batch_size_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let size = parse::kstrtoull(input, 10).map_err(|_| EINVAL)?;
    zram.set_writeback_batch_size(u32::try_from(size).map_err(|_| EINVAL)?)
}

fn compressed_writeback_show(
    zram: &Zram,
    _disk: DiskRef<'_, Zram>,
    out: &mut SysfsBuf<'_>,
) -> Result {
    write_result(writeln!(out, "{}", u32::from(zram.compressed_writeback())))
}

/// `kstrtobool()`; C answers any parse failure with `EINVAL`.
fn compressed_writeback_store(zram: &Zram, _disk: DiskRef<'_, Zram>, input: &[u8]) -> Result {
    let compressed = parse::kstrtobool(input).map_err(|_| EINVAL)?;
    zram.set_compressed_writeback(compressed)
}

fn bd_stat_show(zram: &Zram, _disk: DiskRef<'_, Zram>, out: &mut SysfsBuf<'_>) -> Result {
    let (count, reads, writes) = zram.bd_stat();
    write_result(writeln!(out, "{count:>8} {reads:>8} {writes:>8}"))
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
static BACKING_DEV: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"backing_dev",
    0o644,
    Some(backing_dev_show),
    Some(backing_dev_store),
);
static WRITEBACK: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"writeback", 0o200, None, Some(writeback_store));
static WRITEBACK_LIMIT: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"writeback_limit",
    0o644,
    Some(writeback_limit_show),
    Some(writeback_limit_store),
);
static WRITEBACK_LIMIT_ENABLE: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"writeback_limit_enable",
    0o644,
    Some(writeback_limit_enable_show),
    Some(writeback_limit_enable_store),
);
static WRITEBACK_BATCH_SIZE: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"writeback_batch_size",
    0o644,
    Some(writeback_batch_size_show),
    Some(writeback_batch_size_store),
);
// 7.x's only ([`Abi::COMPRESSED_WRITEBACK`]).
static COMPRESSED_WRITEBACK: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"compressed_writeback",
    0o644,
    Some(compressed_writeback_show),
    Some(compressed_writeback_store),
);
static BD_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"bd_stat", 0o444, Some(bd_stat_show), None);
// 6.12's only ([`Abi::MAX_COMP_STREAMS`]): 7.x removed it (streams are per CPU).
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
static RECOMP_ALGORITHM: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"recomp_algorithm",
    0o644,
    Some(recomp_algorithm_show),
    Some(recomp_algorithm_store),
);
static RECOMPRESS: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"recompress", 0o200, None, Some(recompress_store));
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
static READ_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"read_stat", 0o444, Some(read_stat_show), None);
static SAME_DETECTION: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"same_detection",
    0o644,
    Some(same_detection_show),
    Some(same_detection_store),
);
static UNIT_STAT: DeviceAttribute<Zram> =
    DeviceAttribute::new(c"unit_stat", 0o444, Some(unit_stat_show), None);
static COMPRESS_UNIT: DeviceAttribute<Zram> = DeviceAttribute::new(
    c"compress_unit",
    0o644,
    Some(compress_unit_show),
    Some(compress_unit_store),
);

/// `max_comp_streams` where the kernel's ABI has it.
const MAX_COMP_STREAMS_ENTRY: Option<AttrPtr<Zram>> =
    where_c_has(Kernel::MAX_COMP_STREAMS, AttrPtr::of(&MAX_COMP_STREAMS));
/// `compressed_writeback` where the kernel's ABI has it and C zram has writeback.
const COMPRESSED_WRITEBACK_ENTRY: Option<AttrPtr<Zram>> = where_c_has(
    Kernel::COMPRESSED_WRITEBACK && C_WRITEBACK,
    AttrPtr::of(&COMPRESSED_WRITEBACK),
);

/// Whether C zram of this kernel has writeback (`CONFIG_ZRAM_WRITEBACK`; Kbuild's cfg).
const C_WRITEBACK: bool = cfg!(zram_rs_writeback);
/// Whether C zram of this kernel has recompression (`CONFIG_ZRAM_MULTI_COMP`; Kbuild's cfg).
const C_MULTI_COMP: bool = cfg!(zram_rs_multi_comp);

/// `attr` where C zram of this kernel has it (`part`: whether it has the option that adds it).
const fn where_c_has(part: bool, attr: AttrPtr<Zram>) -> Option<AttrPtr<Zram>> {
    if part {
        Some(attr)
    } else {
        None
    }
}

/// C zram's attributes, zram_rs's extensions, then the ones that only 6.12 or 7.3 has. (The order
/// only decides the order of creation: sysfs lists a directory sorted by its own hash.)
static LIST: AttributeList<Zram, 27> = AttributeList::new([
    Some(AttrPtr::of(&DISKSIZE)),
    Some(AttrPtr::of(&INITSTATE)),
    Some(AttrPtr::of(&RESET)),
    Some(AttrPtr::of(&COMPACT)),
    Some(AttrPtr::of(&MEM_LIMIT)),
    Some(AttrPtr::of(&MEM_USED_MAX)),
    Some(AttrPtr::of(&IDLE)),
    where_c_has(C_WRITEBACK, AttrPtr::of(&BACKING_DEV)),
    where_c_has(C_WRITEBACK, AttrPtr::of(&WRITEBACK)),
    where_c_has(C_WRITEBACK, AttrPtr::of(&WRITEBACK_LIMIT)),
    where_c_has(C_WRITEBACK, AttrPtr::of(&WRITEBACK_LIMIT_ENABLE)),
    where_c_has(C_WRITEBACK, AttrPtr::of(&WRITEBACK_BATCH_SIZE)),
    where_c_has(C_WRITEBACK, AttrPtr::of(&BD_STAT)),
    Some(AttrPtr::of(&COMP_ALGORITHM)),
    Some(AttrPtr::of(&IO_STAT)),
    Some(AttrPtr::of(&MM_STAT)),
    Some(AttrPtr::of(&DEBUG_STAT)),
    Some(AttrPtr::of(&ALGORITHM_PARAMS)),
    where_c_has(C_MULTI_COMP, AttrPtr::of(&RECOMP_ALGORITHM)),
    where_c_has(C_MULTI_COMP, AttrPtr::of(&RECOMPRESS)),
    Some(AttrPtr::of(&SAME_STAT)),
    Some(AttrPtr::of(&READ_STAT)),
    Some(AttrPtr::of(&SAME_DETECTION)),
    Some(AttrPtr::of(&COMPRESS_UNIT)),
    Some(AttrPtr::of(&UNIT_STAT)),
    MAX_COMP_STREAMS_ENTRY,
    COMPRESSED_WRITEBACK_ENTRY,
]);
static GROUP: AttributeGroup<Zram> = AttributeGroup::new(&LIST);

/// The attribute groups every zram_rs disk is added with.
pub(crate) static GROUPS: AttributeGroups<Zram> = AttributeGroups::new(&GROUP);
