// SPDX-License-Identifier: GPL-2.0
//! C zram's user ABI of Linux 7.2 (Debian unstable's kernel): 7.3's, but for what 7.3 fixed or
//! tightened, each item below either 7.2's own value or 7.3's by reference, so that no decision
//! is written twice. One deliberate difference: for an `idle` age at or beyond the uptime C 7.2
//! marks every page idle (its cutoff wraps, which 7.3 fixed); zram_rs answers as C 7.2 (the
//! device checked) and marks nothing, as 7.3.

use super::{Abi, Linux, ParamsRule, Selection, Turns};
use crate::comp::algorithm::{NameError, Named};
use crate::idle::{self, Cutoff};
use crate::kapi::mem::PoolGfp;
use crate::kapi::time;
use crate::parse::ParseError;
use crate::recompress_args::Recompress;
use kernel::prelude::*;

/// The kernel whose ABI 7.2's is but for the items of its own.
type Next = Linux<7, 3>;

impl Abi for Linux<7, 2> {
    const COMPRESSED_WRITEBACK: bool = Next::COMPRESSED_WRITEBACK;
    const SHOWS_WRITESTALL: bool = Next::SHOWS_WRITESTALL;

    fn memparse(input: &[u8]) -> (u64, usize) {
        Next::memparse(input)
    }

    const BACKEND_KEYS: &'static [&'static str] = Next::BACKEND_KEYS;

    fn algorithm_name<A: Named>(input: &[u8]) -> Result<A, NameError> {
        Next::algorithm_name(input)
    }

    fn recompress_request(input: &[u8]) -> Result<Recompress<'_>, ParseError> {
        Next::recompress_request(input)
    }

    /// A `u32` age in seconds; one at or beyond the uptime changes no mark, after the device's
    /// check.
    fn idle_cutoff(input: &[u8]) -> Result<Option<Cutoff>> {
        let idle = idle::idle_7_2(input)?;
        Ok(Some(Cutoff::of_7_2(idle, time::boottime_seconds())))
    }

    /// No page-count check after rounding: the allocation for 0 pages fails (`ENOMEM`).
    const WRAPPED_DISKSIZE_EINVAL: bool = false;
    const GFP_WRITE_RECLAIM: PoolGfp = Next::GFP_WRITE_RECLAIM;
    const GFP_RECOMPRESS: PoolGfp = Next::GFP_RECOMPRESS;
    /// A `comp_algorithm` write keeps the priority's parameters.
    const ALGORITHM_CHANGE_FORGETS_PARAMS: bool = false;
    const PARAMS: ParamsRule = Next::PARAMS;
    /// The backends check no level and no dictionary (deflate's window is checked on every
    /// kernel that has the key: `backend_deflate.rs`).
    const PARAMS_CHECKED_AT_INIT: bool = false;
    const LZ4_DICT_LOADED_AT_INIT: bool = Next::LZ4_DICT_LOADED_AT_INIT;
    /// A dictionary that cannot be read is `EINVAL`, not logged.
    const DICT_READ_ERRNO: bool = false;

    const TURNS: Turns = Next::TURNS;
    const SELECTION: Selection = Next::SELECTION;
    const BLOCK_ZERO_UNUSED: bool = Next::BLOCK_ZERO_UNUSED;
    const WRITEBACK_LIMIT_WHOLE_PAGES: bool = Next::WRITEBACK_LIMIT_WHOLE_PAGES;
    const BUDGET_WAITS_FOR_WRITEBACK: bool = Next::BUDGET_WAITS_FOR_WRITEBACK;
    const WRITEBACK_ONE_AT_A_TIME: bool = Next::WRITEBACK_ONE_AT_A_TIME;
    const FAILED_WRITEBACK_UNMARKS_IDLE: bool = Next::FAILED_WRITEBACK_UNMARKS_IDLE;
    const WRITTEN_BACK_KEEPS_OBJECT: bool = Next::WRITTEN_BACK_KEEPS_OBJECT;

    const HUGE_FLAG: u32 = Next::HUGE_FLAG;
}
