// SPDX-License-Identifier: GPL-2.0
//! C zram's user ABI of Linux 6.12 LTS.

use super::{Abi, Linux, ParamsRule, Selection, Turns};
use crate::comp::algorithm::{self, NameError, Named};
use crate::idle::{self, Cutoff};
use crate::kapi::mem::{self, PoolGfp};
use crate::kapi::time;
use crate::parse::{self, ParseError};
use crate::recompress_args::{self, Recompress};
use kernel::prelude::*;

impl Abi for Linux<6, 12> {
    const MAX_COMP_STREAMS: bool = true;
    const SHOWS_WRITESTALL: bool = true;

    /// Wraps on overflow; a suffix alone is 0.
    fn memparse(input: &[u8]) -> (u64, usize) {
        parse::memparse(input)
    }

    /// None: C 6.12 ignores `deflate.winbits`.
    const BACKEND_KEYS: &'static [&'static str] = &[];

    /// One trailing newline removed before `sysfs_streq()`.
    fn algorithm_name<A: Named>(input: &[u8]) -> Result<A, NameError> {
        algorithm::parse_name(input)
    }

    /// `priority` a `kstrtouint`; an unknown `type` ignored.
    fn recompress_request(input: &[u8]) -> Result<Recompress<'_>, ParseError> {
        recompress_args::recompress(input, false)
    }

    /// Any `u64` age, C's nanosecond cutoff (wrapping as C's `ktime_t` arithmetic).
    fn idle_cutoff(input: &[u8]) -> Result<Option<Cutoff>> {
        let idle = idle::idle_6_12(input)?;
        Ok(Some(Cutoff::of_6_12(idle, time::boottime_ns())))
    }

    const WRAPPED_DISKSIZE_EINVAL: bool = false;
    const GFP_WRITE_RECLAIM: PoolGfp = mem::GFP_POOL_OBJECT;
    const GFP_RECOMPRESS: PoolGfp = mem::GFP_POOL_OBJECT_FAST;
    const ALGORITHM_CHANGE_FORGETS_PARAMS: bool = false;
    const PARAMS: ParamsRule = ParamsRule::Anytime;
    const PARAMS_CHECKED_AT_INIT: bool = false;
    const LZ4_DICT_LOADED_AT_INIT: bool = false;
    const DICT_READ_ERRNO: bool = false;

    const TURNS: Turns = Turns::RefuseSecond;
    const SELECTION: Selection = Selection::IndexOrder;
    const BLOCK_ZERO_UNUSED: bool = true;
    const WRITEBACK_LIMIT_WHOLE_PAGES: bool = false;
    const BUDGET_WAITS_FOR_WRITEBACK: bool = false;
    const WRITEBACK_ONE_AT_A_TIME: bool = true;
    const FAILED_WRITEBACK_UNMARKS_IDLE: bool = true;
    const WRITTEN_BACK_KEEPS_OBJECT: bool = false;

    const HUGE_FLAG: u32 = 3;
}
