// SPDX-License-Identifier: GPL-2.0
//! C zram's user-visible ABI, one type per kernel series: everything in which C zram of 6.12,
//! 7.2 and 7.3 differ as seen from user space — which attributes exist, how their input is
//! parsed, which errno answers what, the `idle` cutoff rule, how writeback and recompression
//! select, order and charge their slots, which marks a written-back slot keeps, and the slot
//! flag positions of C's `zram_drv.h`. Every implementation is compiled and type-checked in
//! every build; the crate root picks the one of the kernel built against ([`crate::Kernel`]),
//! and the driver asks it and names no kernel version itself.
//!
//! A new kernel series whose zram differs gets a file here with its own `impl Abi`; an
//! attribute that exists on one kernel only is a `const` below (default: absent) that its
//! kernel's file sets.

use crate::comp::algorithm::{self, AlgorithmParams, NameError, Named, MAX_BACKEND_KEYS};
use crate::idle::Cutoff;
use crate::kapi::mem::PoolGfp;
use crate::parse::ParseError;
use crate::recompress_args::Recompress;
use kernel::prelude::*;

mod v6_12;
mod v7_2;
mod v7_3;

/// Linux `MAJOR.MINOR`: the type whose [`Abi`] implementation is C zram's ABI of that kernel
/// series (`v6_12.rs`, `v7_2.rs`, `v7_3.rs`). Only its implementations are used: it is never
/// made.
pub(crate) struct Linux<const MAJOR: u32, const MINOR: u32>;

const _: () = assert!(
    Linux::<6, 12>::BACKEND_KEYS.len() <= MAX_BACKEND_KEYS
        && Linux::<7, 2>::BACKEND_KEYS.len() <= MAX_BACKEND_KEYS
        && Linux::<7, 3>::BACKEND_KEYS.len() <= MAX_BACKEND_KEYS
);

/// How a post-processing (writeback or recompression) meets another on the same device.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turns {
    /// C 6.12's `pp_in_progress`: a second one is refused with `EAGAIN`; nothing else waits.
    RefuseSecond,
    /// C 7.3's device lock: a second one waits for the first, and so do `idle`, `compact` and
    /// `mem_used_max`, while no post-processing starts during theirs.
    Queue,
}

/// Which slots a post-processing takes, in which order, and when it reads its request.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Selection {
    /// C 6.12: the request (one mode word or one index) is read before any check; the slots
    /// are visited in index order, each judged when it is reached; recompression tries every
    /// configured priority above the object's own.
    IndexOrder,
    /// C 7.3: the `key=value` request is read after the device checks; the slots it selects
    /// are marked first, then processed largest first (C's size buckets); recompression uses
    /// exactly one priority.
    MarkedLargestFirst,
}

/// When an `algorithm_params` write is taken, and under which lock.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamsRule {
    /// C 6.12: at any time, under no device lock; `algo` wins over `priority`; every failure
    /// is `EINVAL`.
    Anytime,
    /// C 7.3: only before initialisation (`EBUSY` after), under the device lock; a given
    /// `priority` is checked against `algo`.
    BeforeInit,
}

/// C zram's user ABI of one kernel series. Only associated items: the type is never made.
pub(crate) trait Abi {
    // The attributes that exist on one kernel only.

    /// `max_comp_streams` (6.12; 7.x removed it).
    const MAX_COMP_STREAMS: bool = false;
    /// `compressed_writeback` (7.3; like every writeback attribute, only where C zram has
    /// writeback).
    const COMPRESSED_WRITEBACK: bool = false;
    /// `debug_stat` shows the write-stall count (6.12; C 7.x no longer counts stalls).
    const SHOWS_WRITESTALL: bool;

    // Parsers.

    /// The kernel's `memparse()` (`disksize`, `mem_limit`): the value and the bytes parsed.
    fn memparse(input: &[u8]) -> (u64, usize);
    /// The backend parameters (`algorithm.key`) `algorithm_params` knows, at most
    /// [`MAX_BACKEND_KEYS`]; other keys are ignored as unknown.
    const BACKEND_KEYS: &'static [&'static str];
    /// An `algorithm_params` write.
    fn algorithm_params(input: &[u8]) -> Result<AlgorithmParams<'_>, ParseError> {
        algorithm::parse_algorithm_params(input, Self::BACKEND_KEYS)
    }
    /// A `comp_algorithm` or `recomp_algorithm` name.
    fn algorithm_name<A: Named>(input: &[u8]) -> Result<A, NameError>;
    /// A `recompress` write.
    fn recompress_request(input: &[u8]) -> Result<Recompress<'_>, ParseError>;
    /// An `idle` write, with access times kept: the cutoff, from the boot clock now, or
    /// `None` for a write accepted without doing anything (not even the initialisation check).
    fn idle_cutoff(input: &[u8]) -> Result<Option<Cutoff>>;

    // Errnos and rules.

    /// A `disksize` within a page of 2^64, whose rounding wraps to 0, is refused with `EINVAL`
    /// (7.x); else the allocation for it fails with `ENOMEM` (6.12).
    const WRAPPED_DISKSIZE_EINVAL: bool;
    /// The write path's pool allocation with reclaim, after the one without failed: quiet
    /// (7.3) or warning on failure (6.12).
    const GFP_WRITE_RECLAIM: PoolGfp;
    /// A recompression's pool allocation: without direct reclaim (6.12) or with (7.3); quiet.
    const GFP_RECOMPRESS: PoolGfp;
    /// Choosing an algorithm for a priority forgets the parameters set for it (7.x).
    const ALGORITHM_CHANGE_FORGETS_PARAMS: bool;
    /// When `algorithm_params` is taken.
    const PARAMS: ParamsRule;
    /// An algorithm's parameters are checked when the device is initialised, which fails on
    /// a bad one (7.x); else a bad level is the library's to refuse or ignore (6.12).
    const PARAMS_CHECKED_AT_INIT: bool;
    /// An lz4 dictionary is loaded when the device is initialised, which fails if the library
    /// does not take it whole (7.x); else it is loaded for each page (6.12).
    const LZ4_DICT_LOADED_AT_INIT: bool;
    /// A dictionary that cannot be read is answered with the read's own errno, logged (7.3);
    /// else `EINVAL` (6.12).
    const DICT_READ_ERRNO: bool;

    // Post-processing: writeback and recompression.

    /// How post-processings meet.
    const TURNS: Turns;
    /// How they select and order slots.
    const SELECTION: Selection;
    /// The backing device's block 0 is never handed out (6.12).
    const BLOCK_ZERO_UNUSED: bool;
    /// `writeback_limit` is rounded down to whole pages (7.3).
    const WRITEBACK_LIMIT_WHOLE_PAGES: bool;
    /// Changing the writeback budget waits for a running writeback (7.3, whose device lock
    /// it takes for writing); else it changes a running writeback's budget at once (6.12).
    const BUDGET_WAITS_FOR_WRITEBACK: bool;
    /// Pages are written back one at a time and the budget charged once a page is written
    /// (6.12); else `writeback_batch_size` writes are in flight, each charged when submitted
    /// and refunded if it fails (7.3).
    const WRITEBACK_ONE_AT_A_TIME: bool;
    /// A failed writeback of a slot takes its idle mark away too (6.12).
    const FAILED_WRITEBACK_UNMARKS_IDLE: bool;
    /// A written-back slot keeps its object's size, `ZRAM_HUGE`, priority, incompressible
    /// mark and access time (7.3); else only the block (6.12).
    const WRITTEN_BACK_KEEPS_OBJECT: bool;

    // The slot layout.

    /// `ZRAM_HUGE - ZRAM_FLAG_SHIFT` in C's `zram_drv.h`: 3 on 6.12; 7.3 put a lock bit, and
    /// moved its writeback flags, in front of it (checked at build time where the tree has
    /// the header, `table.rs`).
    const HUGE_FLAG: u32;
}
